"""What a run folder holds besides its records, so that it says how it was run and can be run again: the suite as
it was read (`suite.yaml`) and every config's resolved spec with every run setting (`plan.json`: `steps`,
`timeout_s`, `comm_steps` included, which records leave out), beside `env.json`. Written when a run begins; a
resumed run keeps them, as it keeps its environment. Parent side: no TF."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tfscale._version import __version__
from tfscale.axes import SETTINGS
from tfscale.errors import SuiteError
from tfscale.store.records import PLAN_FILE, SUITE_FILE, find_records_files, write_atomic, write_json_atomic
from tfscale.suite.suitefile import MAX_SUITE_BYTES, Suite, parse_suite
from tfscale.untrusted import UntrustedFile, read_capped

# plan.json's layout, by version:
# 1: {"plan_version", "tfscale_version", "suite_path", "specs": [RunSpec dicts]} (tfscale 0.4.0)
# 2: adds "label" (`tfscale run --label`) and "commit" (`git describe` of the suite's folder), each null where none
PLAN_VERSION = 2
GIT_TIMEOUT_S = 10.0  # a `git describe` that takes longer (a network file system) is left out, not waited for


def project_commit(folder: str | Path) -> str | None:
    """`git describe --tags --always --dirty` of the git work tree that holds `folder` (the project a suite lives
    in), None outside one or where git is missing or fails. No fsmonitor hook runs (a repository's config must not
    run programs for a benchmark) and the index is not rewritten (GIT_OPTIONAL_LOCKS=0)."""
    command = ["git", "-c", "core.fsmonitor=false", "-C", str(folder), "describe", "--tags", "--always", "--dirty"]
    environment = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, env=environment, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and text and len(text) <= MAX_COMMIT_CHARS else None


MAX_COMMIT_CHARS = 200  # a describe is a tag, a count and a hash: anything longer is not one


def suite_folder(suite: Suite) -> Path:
    """The folder a suite was read from; the working directory for a suite given as a dict."""
    path = Path(suite.path)
    return path.parent if suite.path and path.is_file() else Path.cwd()


def describe_run(folder: Path, suite: Suite, specs: list[dict[str, Any]], label: str | None = None) -> None:
    """Write suite.yaml and plan.json (with `label` and the suite's project commit) into a run folder that has
    none yet."""
    if not (folder / SUITE_FILE).exists():
        write_atomic(folder / SUITE_FILE, suite.text)
    if not (folder / PLAN_FILE).exists():
        plan = {"plan_version": PLAN_VERSION, "tfscale_version": __version__, "suite_path": suite.path}
        plan |= {"label": label, "commit": project_commit(suite_folder(suite)), "specs": specs}
        write_json_atomic(folder / PLAN_FILE, plan)


def update_to_2(plan: dict[str, Any]) -> dict[str, Any]:
    """A version 1 plan as version 2: no label, no commit (neither was recorded)."""
    return {**plan, "plan_version": 2, "label": None, "commit": None}


UPDATES = {1: update_to_2}  # plan version -> the step to the next one


def suite_of_run(folder: str | Path) -> Suite:
    """The suite a run folder was run with, to run it again: its suite.yaml, read as from the folder the suite was
    in (the specs' suite_dir, where its user models are imported from) while that folder exists, else from the run
    folder."""
    folder = Path(folder)
    try:
        text = read_capped(folder / SUITE_FILE, MAX_SUITE_BYTES).decode("utf-8")
    except (OSError, UntrustedFile, UnicodeDecodeError) as error:
        raise SuiteError(f"{folder}: not a run folder with its {SUITE_FILE} ({error})") from None
    plan = read_plan(folder) or {}
    specs, name = plan.get("specs") or [{}], Path(str(plan.get("suite_path") or SUITE_FILE)).name
    suite_dir = specs[0].get("suite_dir") if isinstance(specs[0], dict) else None
    home = Path(suite_dir) if isinstance(suite_dir, str) and suite_dir and Path(suite_dir).is_dir() else None
    return parse_suite(text, str(home / name if home else folder / SUITE_FILE))


def read_plan(folder: str | Path) -> dict[str, Any] | None:
    """A run folder's plan.json, None where it has none (runs before tfscale 0.4.0 kept none) or it is unreadable."""
    try:
        plan = json.loads(read_capped(Path(folder) / PLAN_FILE, 64 << 20))
    except (OSError, UntrustedFile, ValueError):
        return None
    if not isinstance(plan, dict):
        return None
    while isinstance(plan.get("plan_version"), int) and plan["plan_version"] in UPDATES:
        plan = UPDATES[plan["plan_version"]](plan)
    return plan if plan.get("plan_version") == PLAN_VERSION else None


def run_settings(path: str | Path) -> dict[tuple, dict[str, Any]]:
    """(suite, run id, config id) -> every run setting each config ran with, from the plan.json of each run folder
    under `path` (a records file, run, suite folder or results root); runs that kept none are left out."""
    found = {}
    for records in find_records_files(path):
        plan = read_plan(records.parent) or {}
        for spec in plan.get("specs") or []:
            if isinstance(spec, dict):
                key = (spec.get("suite"), records.parent.name, spec.get("config_id"))
                found[key] = {name: spec.get(name) for name in SETTINGS if name in spec}
    return found
