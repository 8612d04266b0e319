"""A corpus of hostile strings (issue 37) and records that carry them, for the tests that push them through every
command. `{canary}` in a string is the path of a file that exists only if something executed the string."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"

HOSTILE = (
    "evil\ntouch {canary}\n#",
    "cr\r\nlf",
    "nul\x00byte",
    "quote'\"both",
    "$(touch {canary})",
    "`touch {canary}`",
    "; touch {canary} #",
    "../../outside",
    "/abs/path",
    "</script><script>alert(1)</script>",
    "]]><x/>",
    "a|b|c",
    "\x1b[2J\x1b]0;retitled\x07",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    '<a href="https://example.invalid/x">a link plotly would draw</a>',
    "</details>*bold* [link](http://x)",
    "\u202eevil",
    "lone \ud800 surrogate",
)
# Markup the corpus holds: none of it may reach an HTML page, an XML file or a Markdown comment as markup.
MARKUP = ("<script>alert", "<img src=x", '<a href="javascript', '<a href="https:', "</details>", "<x/>")


def hostile(canary: Path) -> list[str]:
    return [text.format(canary=canary) for text in HOSTILE]


def hostile_run(root: Path, canary: Path, name: str = "r") -> Path:
    """A copy of the committed quickstart run under root/quickstart/<name> whose records carry the corpus in every
    text a reader shows (model, host, reason, log tail, config ids) and point their telemetry_path outside the run
    folder; its env.json carries it too."""
    run = root / "quickstart" / name
    shutil.copytree(DATA / "quickstart-run", run)
    strings = hostile(canary)
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    outside = root / "outside.csv"
    outside.write_text("t_s,host_cpu_percent\n0,1\n")
    (run / "telemetry").mkdir(exist_ok=True)
    (run / "telemetry" / "linked.csv").symlink_to(outside)
    escapes = ["../../outside.csv", str(outside), "telemetry/linked.csv", "/dev/zero"]
    for i, record in enumerate(records):
        text = strings[i % len(strings)]
        record["model"] = text
        record["host"] = text
        record["telemetry_path"] = escapes[i % len(escapes)]
        if i % 3 == 0:
            record |= {"status": "failed", "reason": text, "log_tail": "\n".join(strings)}
            for figure in ("step_time_median_s", "throughput_examples_per_s"):
                record[figure] = None
    records[1]["config_id"] = strings[7]  # ../../outside
    records[2]["config_id"] = strings[8]  # /abs/path
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    env = json.loads((run / "env.json").read_text())
    env |= {"hostile": strings, "<script>key": strings[9]}
    (run / "env.json").write_text(json.dumps(env))
    return run
