"""The HTML reports in a real browser (Debian's headless Chromium): no JavaScript error, every plot rendered."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tfscale.cli import cli

pytestmark = [pytest.mark.e2e, pytest.mark.system]
DATA = Path(__file__).resolve().parent.parent / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=15000",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_renders(page: Path, tmp_path: Path) -> None:
    plots = page.read_text().count('class="plotly-graph-div"')
    assert plots > 0
    done = chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    errors = [
        line for line in done.stderr.splitlines() if "CONSOLE" in line and ("Error" in line or "Uncaught" in line)
    ]
    assert errors == []
    # plotly adds js-plotly-plot to the class of each div it has drawn, and draws main-svg elements in it
    drawn = re.findall(r'<div[^>]*class="[^"]*plotly-graph-div[^"]*js-plotly-plot', done.stdout)
    assert len(drawn) == plots
    assert done.stdout.count('<svg class="main-svg"') >= plots
    shot = page.with_suffix(".png")
    taken = chromium(page, tmp_path / "profile-shot", "--window-size=1400,3000", f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_run_and_compare_reports_render_in_chromium(runner, tmp_path):
    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "quickstart-run", run)
    report, comparison = tmp_path / "report.html", tmp_path / "compare.html"
    assert runner.invoke(cli, ["report", str(run), "-o", str(report)]).exit_code == 0
    assert runner.invoke(cli, ["compare", str(run), str(run), "-o", str(comparison)]).exit_code == 0
    assert_renders(report, tmp_path)
    assert_renders(comparison, tmp_path)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_many_runs_render_condensed_plots_and_a_paged_table(runner, tmp_path):
    # 10 copies of the example run: plots show each config once (> 6 runs), the 230-row table is packed and paged
    for i in range(10):
        run = tmp_path / "quickstart" / f"r{i}"
        shutil.copytree(DATA / "example-run", run)
        lines = (run / "records.jsonl").read_text().replace('"run_id": "q"', f'"run_id": "r{i}"')
        (run / "records.jsonl").write_text(lines)
    report = tmp_path / "many.html"
    assert runner.invoke(cli, ["report", str(tmp_path / "quickstart"), "-o", str(report)]).exit_code == 0
    text = report.read_text()
    assert "These 10 runs are shown one config at a time" in text
    assert text.count('class="table-data"') >= 1
    assert_renders(report, tmp_path)
    done = chromium(report, tmp_path / "profile-table", "--dump-dom")
    assert "rows 1-100 of 230" in done.stdout
    assert done.stdout.count("<tr") > 100  # the first page of the packed table and the small tables


# Measures, once the page has loaded, every table row's height in lines of its own text, and the first screen.
MEASURE = """<script>
window.addEventListener("load", function () {
  var most = 0, where = "";
  document.querySelectorAll("table tr").forEach(function (tr) {
    var cell = tr.cells[0];
    if (!cell) return;
    var style = getComputedStyle(cell), line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
    var lines = (tr.getBoundingClientRect().height - 2 * parseFloat(style.paddingTop)) / line;
    if (lines > most) { most = lines; where = tr.textContent.slice(0, 80); }
  });
  document.body.dataset.rowLines = most.toFixed(2);
  document.body.dataset.tallestRow = where;
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_no_table_row_is_taller_than_two_lines_at_1400_px(runner, tmp_path):
    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "quickstart-run", run)
    report = tmp_path / "report.html"
    assert runner.invoke(cli, ["report", str(run), "-o", str(report)]).exit_code == 0
    measured = tmp_path / "measured.html"
    measured.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    done = chromium(measured, tmp_path / "profile-rows", "--window-size=1400,1000", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = float(re.search(r'data-row-lines="([0-9.]+)"', done.stdout).group(1))
    tallest = re.search(r'data-tallest-row="([^"]*)"', done.stdout).group(1)
    assert 0.5 < lines <= 2.0, tallest


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_hostile_records_render_as_text_in_chromium(runner, tmp_path):
    # Issue 37: the corpus in model names, reasons and config ids; plotly draws labels from them. No element the
    # strings spell may appear in the drawn page: no image, no javascript: link, no script of theirs.
    from unit.hostile_strings import hostile_run

    canary = tmp_path / "PWNED"
    run = hostile_run(tmp_path / "results", canary)
    report, comparison = tmp_path / "report.html", tmp_path / "compare.html"
    assert runner.invoke(cli, ["report", str(run), "-o", str(report)]).exit_code == 0
    assert runner.invoke(cli, ["compare", str(run), str(run), "-o", str(comparison)]).exit_code == 0
    for page in (report, comparison):
        assert_renders(page, tmp_path)
        dom = chromium(page, tmp_path / "profile-hostile", "--dump-dom").stdout
        drawn = re.sub(r"<script\b[^>]*>.*?</script>", "", dom, flags=re.S)  # the page's own scripts' text aside
        elements = re.findall(r"<(?:img|a|script)\b[^>]*>", drawn)  # as elements, not as text (&lt;img ...)
        hostile = [e for e in elements if "javascript:" in e or "example.invalid" in e or e.startswith("<img")]
        assert not hostile, hostile[:5]
        assert "<script>alert(1)</script>" not in dom
        assert "&lt;img src=x onerror=alert(1)&gt;" in dom  # shown, as text
    assert not canary.exists()


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_the_history_page_renders_in_chromium(runner, tmp_path, write_history_run):
    suite = tmp_path / "results" / "quickstart"
    for day in range(1, 6):
        write_history_run(suite, f"2026120{day}", day, 1.25 if day >= 4 else 1.0)  # run ids that read as numbers
    page = tmp_path / "history.html"
    assert runner.invoke(cli, ["history", str(suite), "-o", str(page)]).exit_code == 0
    assert_renders(page, tmp_path)
