import json
import os

import pytest
from click.testing import CliRunner

from tfscale.envinfo import CACHE_DIR_ENV


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
