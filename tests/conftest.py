import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tfscale.host.envinfo import CACHE_DIR_ENV

E2E = "tests/e2e/"  # where the e2e tests are (pytestmark e2e): one test process runs them, one after another


def pytest_xdist_make_scheduler(config, log):
    """xdist's scheduler with every e2e test in one work unit: they time TensorFlow on this machine's cores (two at
    once would slow each other's steps and race for ports and namespaces), while the fast tier's tests spread over
    the other test process. (Not xdist's own `--dist loadgroup`: pytest 9.2 ignores the group suffix it writes.)"""
    from xdist.scheduler import LoadScopeScheduling  # late: only when the tests run in several processes

    class E2EInOneProcess(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return E2E if nodeid.startswith(E2E) else nodeid

    return E2EInOneProcess(config, log)


def pytest_collection_modifyitems(items):
    """The e2e marker (what the fast tier leaves out) and the e2e folder (what the scheduler keeps in one process)
    name the same tests."""
    stray = [item.nodeid for item in items if bool(item.get_closest_marker("e2e")) != item.nodeid.startswith(E2E)]
    if stray:
        raise pytest.UsageError(f"marked e2e outside {E2E}, or not marked e2e inside it: {', '.join(stray)}")


@pytest.fixture(scope="session", autouse=True)
def tfscale_cache(tmp_path_factory):
    """What tfscale measures once per host (the CPU peak) is cached under the test session's temporary folder,
    never in the user's ~/.cache: measured once per test session, and no file left behind."""
    before = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# Five fresh processes per config, their step times 2 % apart: what a gated comparison needs (repeats: 5).
PROCESS_FACTORS = (0.98, 0.99, 1.0, 1.01, 1.02)


def _in_processes(run, slow=None, factor=1.2):
    """Rewrite the run's records.jsonl as every config measured in five processes (PROCESS_FACTORS x its first
    process's windows), config `slow` `factor` x slower in each."""
    first = {}
    for r in map(json.loads, (run / "records.jsonl").read_text().splitlines()):
        first.setdefault(r["config_id"], r)
    lines = []
    for cid, r in first.items():
        for k, f in enumerate(PROCESS_FACTORS):
            f *= factor if cid == slow else 1.0
            lines.append(
                r
                | {
                    "repeat": k,
                    "repeats": len(PROCESS_FACTORS),
                    "step_times_s": [t * f for t in r["step_times_s"]],
                    "step_time_median_s": r["step_time_median_s"] * f,
                    "throughput_examples_per_s": r["throughput_examples_per_s"] / f,
                }
            )
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


@pytest.fixture
def in_processes():
    """_in_processes: a run folder's records as five processes per config (for compare's verdicts)."""
    return _in_processes


HISTORY_DATA = Path(__file__).parent / "data" / "quickstart-run"
HISTORY_PLANTED = "267aa81860f8"  # mlp mirrored 1 node x 2: the config a history run slows
HISTORY_BASELINE = "669af014c8c7"  # mlp one_device
HISTORY_WOBBLE = [1.0, 0.99, 1.01, 1.005, 0.995]  # each run's own small offset (1 %)


def _write_history_run(
    suite: Path, run_id: str, day: int, slow: float, cpu_model: str | None = None, plan: dict | None = None
) -> None:
    """A run of the two configs with 40 steady windows each (0.2 % apart) at the quickstart's medians x `slow`;
    `plan`: what its plan.json holds besides the version (label, commit, specs), none without."""
    folder = suite / run_id
    folder.mkdir(parents=True)
    env = json.loads((HISTORY_DATA / "env.json").read_text())
    env["cpu_model"] = cpu_model or env["cpu_model"]
    (folder / "env.json").write_text(json.dumps(env))
    if plan is not None:
        (folder / "plan.json").write_text(json.dumps({"plan_version": 2, "specs": []} | plan))
    lines, seen = [], set()
    for line in (HISTORY_DATA / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["config_id"] not in (HISTORY_PLANTED, HISTORY_BASELINE) or record["config_id"] in seen:
            continue
        seen.add(record["config_id"])
        factor = HISTORY_WOBBLE[day % len(HISTORY_WOBBLE)] * (slow if record["config_id"] == HISTORY_PLANTED else 1.0)
        step = record["step_time_median_s"] * factor
        record |= {"run_id": run_id, "started_at": f"2026-12-{day:02d}T10:00:00+00:00"}
        record["step_times_s"] = [step * (1 + 0.002 * ((i % 5) - 2)) for i in range(40)]
        record["throughput_examples_per_s"] = record["global_batch_size"] / step
        lines.append(json.dumps(record))
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture
def write_history_run():
    """_write_history_run: one run of a suite folder for `tfscale history` (two configs, one slowed by a factor)."""
    return _write_history_run
