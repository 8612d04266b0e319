"""`tfscale run SUITE`: plan, run every config in its own worker process, store records, write the report.

Resume: configs are identified by config_id; in a run folder that already has records, configs with a record are
skipped (default when --run-id names an existing run), --rerun-failed runs failed ones again (their old records are
removed first), --fresh starts a new run. Ctrl-C (or SIGTERM) stops the workers, keeps every finished record and
prints the command that resumes; a second Ctrl-C kills the workers at once and exits.
"""

from __future__ import annotations

import errno
import shlex
import signal
import sys
from pathlib import Path

import click

from tfscale import metrics as m
from tfscale.cli.report_cmd import summary_and_report
from tfscale.errors import TfscaleError
from tfscale.netsim.network import unavailable_reason
from tfscale.plan import expand, network_note
from tfscale.suite import load_suite

INTERRUPTED_EXIT = 130
RUN_LAUNCHERS = ("local", "slurm")  # tfscale.launch.LAUNCHERS, named here so that --help imports no launcher


def _hard_stop(signum, frame) -> None:
    from tfscale.launch.processes import kill_live_now
    from tfscale.netsim.network import remove_live_networks

    kill_live_now()
    remove_live_networks()
    sys.stderr.write("tfscale: interrupted again: workers killed\n")
    sys.stderr.flush()
    import os

    os._exit(INTERRUPTED_EXIT)


def _interrupt(signum, frame) -> None:
    # The first interrupt unwinds normally (workers are stopped by the launchers on the way out); a second one
    # must not interrupt that cleanup half-way and leave processes behind, so it kills them all itself.
    signal.signal(signal.SIGINT, _hard_stop)
    signal.signal(signal.SIGTERM, _hard_stop)
    raise KeyboardInterrupt


@click.command()
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
@click.option("--results-dir", default="results", show_default=True, help="Root of results/<suite>/<run_id>/.")
@click.option("--reports-dir", default="reports", show_default=True, help="Where <suite>.html is written.")
@click.option("--run-id", default=None, help="Name of the run folder (default: a timestamp).")
@click.option(
    "--resume/--no-resume",
    default=None,
    help="Skip configs that already have a record in the run folder (default: on when it exists).",
)
@click.option("--rerun-failed", is_flag=True, help="Also run again the configs whose record says failed/timeout.")
@click.option("--fresh", is_flag=True, help="Start a new run (a new timestamped run id).")
@click.option("--no-report", is_flag=True, help="Store records only; skip the HTML report.")
@click.option(
    "--launcher",
    type=click.Choice(list(RUN_LAUNCHERS)),
    default="local",
    show_default=True,
    help="local: worker processes on this host; slurm: each config a job step in a Slurm allocation.",
)
@click.option("--partition", default=None, help="slurm: partition of the allocation.")
@click.option("--account", default=None, help="slurm: account charged for the allocation.")
@click.option("--time-limit", default=None, help="slurm: time limit of the allocation (e.g. 2:00:00).")
@click.option("--slurm-arg", "slurm_args", multiple=True, help="slurm: extra salloc argument (repeatable).")
def run(
    suite_file: str,
    results_dir: str,
    reports_dir: str,
    run_id: str | None,
    resume: bool | None,
    rerun_failed: bool,
    fresh: bool,
    no_report: bool,
    launcher: str,
    partition: str | None,
    account: str | None,
    time_limit: str | None,
    slurm_args: tuple[str, ...],
) -> None:
    """Run every config of SUITE and report. Exits 1 when any config failed or timed out."""
    from tfscale.envinfo import collect_env
    from tfscale.progress import Progress
    from tfscale.runner import check_user_models, default_run_id, pending_specs, run_plan
    from tfscale.store import run_dir

    plan = expand(load_suite(suite_file))
    if fresh and run_id:
        raise TfscaleError("--fresh starts a new run: give it no --run-id")
    run_id = run_id or default_run_id()
    folder = run_dir(results_dir, plan.suite.name, run_id)
    has_records = (folder / "records.jsonl").exists()
    if resume is None:
        resume = has_records or rerun_failed
    if has_records and not resume:
        raise TfscaleError(
            f"{folder}: this run already has records; resume it (--resume, --rerun-failed) or start a new one (--fresh)"
        )
    note = network_note(plan, unavailable_reason())
    if note:
        click.echo(note, err=True)
    elif any(spec.network_link is not None for spec in plan.specs):
        _remove_stale_networks()
    check_user_models(plan)
    pending = pending_specs(plan, folder, rerun_failed)
    kept = f"; {pending.recorded} already recorded, skipped" if pending.recorded else ""
    retried = f"; {pending.retried} failed ones run again" if pending.retried else ""
    click.echo(
        f"suite {plan.suite.name!r}: {len(plan.specs)} configs, run {run_id}{kept}{retried}; "
        f"{len(pending.specs)} to run{_processes(pending)}; capturing environment"
        + ("; all-reduce sweeps (commbench) first" if plan.suite.commbench and pending.specs else "")
    )

    chosen = _launcher(launcher, partition, account, time_limit, slurm_args, pending.specs, plan.suite.name)
    env = collect_env()
    if plan.suite.device == "gpu":
        _gpu_preflight(chosen, pending.specs, env)
    previous = (signal.signal(signal.SIGINT, _interrupt), signal.signal(signal.SIGTERM, _interrupt))
    try:
        with chosen:
            result = run_plan(
                plan,
                results_dir,
                run_id,
                env=env,
                on_record=Progress(len(pending.runs), click.echo),
                pending=pending,
                launcher=chosen,
                on_skip=lambda line: click.echo(line, err=True),
            )
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise TfscaleError(
            f"{folder}: {error.strerror}: the sweep stopped; the records before are intact: free space, then "
            f"resume with: {shlex.join(_resume_command(suite_file, run_id, results_dir))}"
        ) from None
    except KeyboardInterrupt:
        resume_command = _resume_command(suite_file, run_id, results_dir)
        click.echo(
            f"\ntfscale: interrupted; finished configs are recorded in {folder / 'records.jsonl'}; "
            f"resume with: {shlex.join(resume_command)}",
            err=True,
        )
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
    click.echo(f"records: {result.run_dir / 'records.jsonl'}")
    for error in result.commbench_errors:
        click.echo(f"warning: {error}", err=True)

    if not no_report:
        summary_and_report([result.run_dir], Path(reports_dir) / f"{plan.suite.name}.html")
    failed = {r[m.CONFIG_ID] for r in result.records if r[m.STATUS] in (m.STATUS_FAILED, m.STATUS_TIMEOUT)}
    if failed:
        configs = len({r[m.CONFIG_ID] for r in result.records})
        click.echo(f"{len(failed)} of {configs} configs did not succeed (see the report's warnings)", err=True)
        raise click.exceptions.Exit(1)


def _processes(pending) -> str:
    """' (N processes: repeats)' where configs run in more than one process each."""
    return f" ({len(pending.runs)} processes: repeats)" if len(pending.runs) > len(pending.specs) else ""


def _resume_command(suite_file: str, run_id: str, results_dir: str) -> list[str]:
    command = ["tfscale", "run", suite_file, "--run-id", run_id]
    return command + (["--results-dir", results_dir] if results_dir != "results" else [])


def _remove_stale_networks() -> None:
    """Simulated hosts a tfscale killed with SIGKILL left behind (its workers died with it; its namespaces cannot):
    removed before this run makes its own, as `tfscale clean-net` would."""
    from tfscale.netsim.clean import clean

    stale = clean()
    names = stale.namespaces + stale.links
    if names:
        click.echo(f"note: removed what a tfscale that died left of its simulated hosts: {', '.join(names)}", err=True)


def _gpu_preflight(launcher, specs, env: dict) -> None:
    """Print what GPUs there are and what TF sees; refuse the sweep (before any worker starts) when a config does
    not fit on this host's GPUs or TF cannot use them. On Slurm the GPUs are on the nodes: each rank checks its
    own share there."""
    from tfscale.preflight import env_summary, gpu_preflight, tf_gpu_count

    click.echo(env_summary(env))
    if launcher.name != "local":
        return
    problem = gpu_preflight(specs, launcher.gpus, tf_gpu_count(env))
    if problem:
        raise TfscaleError(f"refused before the sweep: {problem}")


def _launcher(
    name: str,
    partition: str | None,
    account: str | None,
    time_limit: str | None,
    slurm_args: tuple[str, ...],
    specs,
    suite_name: str,
):
    """The launcher the sweep runs through (a context manager held for the sweep)."""
    from tfscale.launch import LAUNCHERS

    if name == "local":
        if partition or account or time_limit or slurm_args:
            raise TfscaleError("--partition, --account, --time-limit and --slurm-arg need --launcher slurm")
        return LAUNCHERS["local"]()
    from tfscale.launch.slurm import SlurmOptions, unavailable_reason

    reason = unavailable_reason()
    if reason:
        raise TfscaleError(reason)
    options = SlurmOptions(partition, account, time_limit, tuple(slurm_args))
    return LAUNCHERS["slurm"](options, specs, f"tfscale-{suite_name}", click.echo)
