"""`tfscale run`'s sweep on the parent side, around runner.run_plan: the options checked, the notes a run starts
with, its environment, Ctrl-C and a full disk stopping it cleanly, the summary and report it ends with. What
`tfscale.run` (tfscale.api) and the `tfscale run` command call; also where library calls write their lines (Echo).

Imports neither TensorFlow (only worker processes do) nor pandas (loaded once there are records to show).
"""

from __future__ import annotations

import errno
import shlex
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfscale import metrics as m
from tfscale.errors import TfscaleError

if TYPE_CHECKING:
    import pandas as pd

RUN_LAUNCHERS = ("local", "slurm")  # tfscale.launch.LAUNCHERS that `run` drives, named here to import no launcher
INTERRUPTED_EXIT = 130  # the CLI's exit status after Ctrl-C (128 + SIGINT)


@dataclass(frozen=True)
class Echo:
    """Where `run` and `report` write their lines: `out` for progress and results, `err` for notes and warnings."""

    out: Callable[[str], None]
    err: Callable[[str], None]


def _stdout(line: str) -> None:
    print(line, flush=True)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


PRINT = Echo(_stdout, _stderr)
QUIET = Echo(lambda line: None, lambda line: None)


def summary_and_report(paths, output, reports_dir, echo: Echo, latest: Path | None = None) -> Path:
    """The summary table, then the HTML report (what `run`, `report` and `collect` end with); returns its path.
    With `latest` (a run's report: `output` is reports/<suite>/<run id>.html, kept per run), the same page is also
    written there, the suite's latest (reports/<suite>.html), and that path is returned."""
    # Late imports: pandas and plotly load only once there are records to show.
    from tfscale.analysis import add_scaling, caveat, summary_rows
    from tfscale.htmlreport import write_report
    from tfscale.store.records import load_results, write_atomic
    from tfscale.textable import format_table

    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    target = Path(output) if output else default_report_path(paths, reports_dir)
    frame = add_scaling(load_results(*paths))
    echo.out(format_table(summary_rows(frame)))
    first = caveat(frame)
    if first:
        echo.out(f"caveat: {first}")
    written = write_report(paths, target)
    if latest is None:
        echo.out(f"report: {written}")
        return written
    write_atomic(latest, written.read_bytes())
    echo.out(f"report: {latest} (this run's own: {written})")
    return latest


def default_report_path(paths: list[Path], reports_dir: str | Path) -> Path:
    """reports/<suite>.html when PATH is a run or suite folder (results/<suite>/<run>), else reports/report.html."""
    if len(paths) == 1:
        path = Path(paths[0])
        if (path / "records.jsonl").is_file():
            return Path(reports_dir) / f"{path.parent.name}.html"
        if path.is_dir() and any(path.glob("*/records.jsonl")):
            return Path(reports_dir) / f"{path.name}.html"
    return Path(reports_dir) / "report.html"


@dataclass(frozen=True)
class SlurmArgs:
    """`tfscale run --launcher slurm` options: the allocation's partition, account, time limit, extra salloc args."""

    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None
    extra: tuple[str, ...] = ()

    def given(self) -> bool:
        return bool(self.partition or self.account or self.time_limit or self.extra)


@dataclass(frozen=True)
class RunOutcome:
    """What `run_suite` did: the run folder, the report written (None with no_report), and the configs that failed
    or timed out."""

    run_dir: Path
    report: Path | None
    failed: set[str]

    def frame(self) -> pd.DataFrame:
        """The run's records with every derived column; attrs "run_dir" and "report" (None with no_report)."""
        from tfscale.analysis import analyze  # late: pandas
        from tfscale.store.records import load_results

        frame = analyze(load_results(self.run_dir))
        frame.attrs.update(run_dir=str(self.run_dir), report=None if self.report is None else str(self.report))
        return frame


def run_suite(
    suite,
    *,
    suite_file: str | None,
    run_id: str | None,
    results_dir: str,
    reports_dir: str,
    resume: bool | None,
    rerun_failed: bool,
    fresh: bool,
    no_report: bool,
    launcher: str,
    slurm: SlurmArgs,
    echo: Echo,
    label: str | None = None,
) -> RunOutcome:
    """`tfscale run` and `tfscale.run`: plan, check, run the sweep through the launcher, store, report."""
    from tfscale.runner.configs import check_user_models, default_run_id, pending_specs
    from tfscale.store.records import run_dir
    from tfscale.suite.planner import expand

    _check_options(launcher, label, fresh, run_id)
    plan = expand(suite)
    run_id = run_id or default_run_id()
    folder = run_dir(results_dir, plan.suite.name, run_id)
    _check_resume(folder, resume)
    _network_notes(plan, echo)
    check_user_models(plan)
    _spread_note(plan, echo)  # after the checks, so that a refused suite gets its error line alone
    pending = pending_specs(plan, folder, rerun_failed)
    echo.out(_start_line(plan, run_id, pending))
    chosen = _launcher(launcher, slurm, pending.specs, plan.suite.name, echo)
    env = _environment(plan, pending.specs, chosen, echo)
    _drift(env, folder, run_id, echo)
    resume_command = shlex.join(_resume_command(suite_file, run_id, results_dir))
    result = _sweep(plan, Path(results_dir), run_id, env, pending, chosen, label, echo, resume_command)
    echo.out(f"records: {result.run_dir / 'records.jsonl'}")
    for error in [*result.commbench_errors, *chosen.warnings()]:
        echo.err(f"warning: {error}")
    written = None
    if not no_report:
        own = Path(reports_dir) / plan.suite.name / f"{run_id}.html"
        latest = Path(reports_dir) / f"{plan.suite.name}.html"
        written = summary_and_report([result.run_dir], own, reports_dir, echo, latest)
    return RunOutcome(result.run_dir, written, _failed(result, echo))


def _check_options(launcher: str, label: str | None, fresh: bool, run_id: str | None) -> None:
    if launcher not in RUN_LAUNCHERS:
        raise TfscaleError(f"launcher: {launcher!r}; allowed: {', '.join(RUN_LAUNCHERS)}")
    if label is not None and not label_ok(label):
        raise TfscaleError(f"--label: {label[:60]!r}: give one line of 1 to {MAX_LABEL_CHARS} printable characters")
    if fresh and run_id:
        raise TfscaleError("--fresh starts a new run: give it no --run-id")


def _check_resume(folder: Path, resume: bool | None) -> None:
    """Refuse to add to a run that has records where asked not to resume it (resuming is the default there)."""
    if resume is False and (folder / "records.jsonl").exists():
        raise TfscaleError(
            f"{folder}: this run already has records; resume it (--resume, --rerun-failed) or start a new one (--fresh)"
        )


def _network_notes(plan, echo: Echo) -> None:
    """Simulated hosts: why they cannot run here, or the stale ones removed and the NCCL settings they run with."""
    from tfscale.netsim.network import unavailable_reason
    from tfscale.suite.planview import nccl_link_note, network_note

    note = network_note(plan, unavailable_reason())
    if note:
        echo.err(note)
    elif any(spec.network_link is not None for spec in plan.specs):
        _remove_stale_networks(echo)
        nccl = nccl_link_note(plan)
        if nccl:
            echo.err(nccl)


def _drift(env: dict, folder: Path, run_id: str, echo: Echo) -> None:
    """The drift between runs this run's CIs cover, from the suite's earlier runs on this machine, into `env` (for
    env.json), and one line saying it; a resumed run keeps the one its env.json has."""
    from tfscale.runner.drift import drift_text, earlier_runs, history_drift, history_spread, history_text
    from tfscale.stats.drift import ENV_KEY
    from tfscale.stats.repeats import HISTORY_ENV_KEY
    from tfscale.store.records import load_env

    kept = load_env(folder)
    if kept:
        env[ENV_KEY], env[HISTORY_ENV_KEY] = kept.get(ENV_KEY), kept.get(HISTORY_ENV_KEY)
    else:  # both from the same earlier runs, read once
        earlier = earlier_runs(folder.parent, run_id, env)
        env[ENV_KEY], env[HISTORY_ENV_KEY] = history_drift(earlier), history_spread(earlier)
    for line in (drift_text(env[ENV_KEY]), history_text(env[HISTORY_ENV_KEY])):
        if line:
            echo.err(line)


def _spread_note(plan, echo: Echo) -> None:
    from tfscale.suite.planview import spread_note

    spread = spread_note(plan)
    if spread:
        echo.err(spread)


def _start_line(plan, run_id: str, pending) -> str:
    kept = f"; {pending.recorded} already recorded, skipped" if pending.recorded else ""
    retried = f"; {pending.retried} failed ones run again" if pending.retried else ""
    return (
        f"suite {plan.suite.name!r}: {len(plan.specs)} configs, run {run_id}{kept}{retried}; "
        f"{len(pending.specs)} to run{_processes(pending)}; capturing environment"
        + ("; all-reduce sweeps (commbench) first" if plan.suite.commbench and pending.specs else "")
    )


def _environment(plan, specs, chosen, echo: Echo) -> dict:
    """The run's env.json: this host, its CPU peak where MFU needs it (measured once per host), the GPU check.
    TensorFlow's view is asked of a fresh worker for a GPU suite (the GPU check reads it) and reused from the last
    identical host for a CPU suite (envinfo.cached_tensorflow_env)."""
    from tfscale.host.envinfo import collect_env, cpu_peaks
    from tfscale.measures.peaks import ENV_KEY as PEAK_ENV_KEY
    from tfscale.measures.peaks import cpu_request

    env = collect_env(reuse_tensorflow=plan.suite.device == "cpu")
    counts, dtypes = cpu_request(specs, chosen.name)
    if counts:  # the denominator of MFU on CPUs: measured once per host (tfscale.measures.peaks)
        env[PEAK_ENV_KEY] = peaks = cpu_peaks(counts, dtypes)
        if peaks.get("source", "").startswith("measured now"):
            host = ", ".join(f"{dtype} {flops / 1e9:.1f} GFLOP/s" for dtype, flops in peaks["host"].items())
            echo.out(f"measured this host's CPU peak once: {host} ({peaks['source']})")
    if plan.suite.device == "gpu":
        _gpu_preflight(chosen, specs, env, echo)
    return env


def _sweep(plan, results_dir: Path, run_id: str, env: dict, pending, chosen, label, echo: Echo, resume_command: str):
    """runner.run_plan through the launcher, with Ctrl-C and a full disk stopping it cleanly (the resume command
    printed)."""
    from tfscale.runner.configs import run_plan
    from tfscale.runner.progress import Progress

    folder = results_dir / plan.suite.name / run_id
    with _interrupts_stop_workers():
        try:
            with chosen:
                return run_plan(
                    plan,
                    results_dir,
                    run_id,
                    env=env,
                    on_record=Progress(len(pending.runs), echo.out),
                    pending=pending,
                    launcher=chosen,
                    on_skip=echo.err,
                    label=label,
                )
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise TfscaleError(
                f"{folder}: {error.strerror}: the sweep stopped; the records before are intact: free space, then "
                f"resume with: {resume_command}"
            ) from None
        except KeyboardInterrupt:
            echo.err(
                f"\ntfscale: interrupted; finished configs are recorded in {folder / 'records.jsonl'}; "
                f"resume with: {resume_command}"
            )
            raise


def _failed(result, echo: Echo) -> set[str]:
    """The configs that failed or timed out, with one line saying how many."""
    failed = {r[m.CONFIG_ID] for r in result.records if r[m.STATUS] in (m.STATUS_FAILED, m.STATUS_TIMEOUT)}
    if failed:
        configs = len({r[m.CONFIG_ID] for r in result.records})
        echo.err(f"{len(failed)} of {configs} configs did not succeed (see the report's warnings)")
    return failed


MAX_LABEL_CHARS = 200


def label_ok(label: str) -> bool:
    """A run label is one line of printable text, 1 to MAX_LABEL_CHARS characters (it is shown on pages and in
    Markdown tables)."""
    return len(label.strip()) > 0 and len(label) <= MAX_LABEL_CHARS and label.isprintable()


def _processes(pending) -> str:
    """' (N processes: repeats)' where configs run in more than one process each."""
    return f" ({len(pending.runs)} processes: repeats)" if len(pending.runs) > len(pending.specs) else ""


def _resume_command(suite_file: str | None, run_id: str, results_dir: str) -> list[str]:
    command = ["tfscale", "run", suite_file or "SUITE", "--run-id", run_id]
    return command + (["--results-dir", results_dir] if results_dir != "results" else [])


def _remove_stale_networks(echo: Echo) -> None:
    """Simulated hosts a tfscale killed with SIGKILL left behind (its workers died with it; its namespaces cannot):
    removed before this run makes its own, as `tfscale clean-net` would."""
    from tfscale.netsim.clean import clean

    stale = clean()
    names = stale.namespaces + stale.links
    if names:
        echo.err(f"note: removed what a tfscale that died left of its simulated hosts: {', '.join(names)}")


def _gpu_preflight(launcher, specs, env: dict, echo: Echo) -> None:
    """Print what GPUs there are and what TF sees; refuse the sweep (before any worker starts) when a config does
    not fit on this host's GPUs or TF cannot use them. On Slurm the GPUs are on the nodes: each rank checks its
    own share there."""
    from tfscale.host.preflight import env_summary, gpu_preflight, tf_gpu_count

    echo.out(env_summary(env))
    if launcher.name != "local":
        return
    problem = gpu_preflight(specs, launcher.gpus, tf_gpu_count(env))
    if problem:
        raise TfscaleError(f"refused before the sweep: {problem}")


def _launcher(name: str, slurm: SlurmArgs, specs, suite_name: str, echo: Echo):
    """The launcher the sweep runs through (a context manager held for the sweep)."""
    from tfscale.launch import LAUNCHERS

    if name == "local":
        if slurm.given():
            raise TfscaleError("--partition, --account, --time-limit and --slurm-arg need --launcher slurm")
        return LAUNCHERS["local"]()
    from tfscale.launch.slurm import unavailable_reason
    from tfscale.launch.srun import SlurmOptions

    reason = unavailable_reason()
    if reason:
        raise TfscaleError(reason)
    options = SlurmOptions(slurm.partition, slurm.account, slurm.time_limit, slurm.extra)
    return LAUNCHERS["slurm"](options, specs, f"tfscale-{suite_name}", echo.out)


def _hard_stop(signum, frame) -> None:
    import os

    from tfscale.launch.processes import kill_live_now
    from tfscale.netsim.network import remove_live_networks

    kill_live_now()
    remove_live_networks()
    sys.stderr.write("tfscale: interrupted again: workers killed\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED_EXIT)


def _interrupt(signum, frame) -> None:
    # The first interrupt unwinds normally (workers are stopped by the launchers on the way out); a second one
    # must not interrupt that cleanup half-way and leave processes behind, so it kills them all itself.
    signal.signal(signal.SIGINT, _hard_stop)
    signal.signal(signal.SIGTERM, _hard_stop)
    raise KeyboardInterrupt


class _interrupts_stop_workers:
    """For the sweep: SIGINT and SIGTERM unwind (the launchers stop their workers), a second one kills them at once;
    the previous handlers come back after. Signal handlers can only be set in the main thread: elsewhere (a
    notebook's background thread) the caller's handling stays as it is."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = (signal.signal(signal.SIGINT, _interrupt), signal.signal(signal.SIGTERM, _interrupt))
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous[0])
            signal.signal(signal.SIGTERM, self.previous[1])
