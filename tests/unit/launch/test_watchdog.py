import os

from tfscale.launch.base import STOPPED_STALL, STOPPED_STARTUP, STOPPED_TIMEOUT
from tfscale.launch.slurm import StepOutcome, port_clash
from tfscale.launch.watchdog import ProgressWatch


def watch_of(tmp_path, startup_s=10.0, stall_s=5.0):
    names = ("worker-0", "worker-1")
    return ProgressWatch(
        {n: tmp_path / f"{n}.progress" for n in names},
        {n: tmp_path / f"{n}.result.json" for n in names},
        100.0,
        startup_s,
        stall_s,
    )


def report(tmp_path, name, phase, mtime_s=1.0):
    path = tmp_path / f"{name}.progress"
    path.write_text(phase)
    os.utime(path, (mtime_s, mtime_s))  # a file server's clock, far from the watchdog's own


def test_a_trainer_that_never_reports_misses_the_startup_deadline(tmp_path):
    watch = watch_of(tmp_path)
    report(tmp_path, "worker-0", "strategy ready")
    assert watch.check(105.0) is None
    assert watch.check(110.0) is None  # exactly at the deadline: not yet past it
    assert watch.check(110.5) == STOPPED_STARTUP
    assert watch.phases() == {"worker-0": "strategy ready", "worker-1": ""}


def test_silence_is_timed_by_the_watchdog_s_clock_from_the_last_change_it_saw(tmp_path):
    watch = watch_of(tmp_path)
    report(tmp_path, "worker-0", "window 1/9")
    report(tmp_path, "worker-1", "window 1/9")
    assert watch.check(101.0) is None  # both first seen at 101, whatever their mtimes say
    report(tmp_path, "worker-0", "window 2/9")  # same mtime and size: the text changed
    assert watch.check(104.0) is None
    assert watch.check(106.0) is None  # worker-1 silent 5 s: not more than stall_s
    assert watch.check(106.5) == STOPPED_STALL


def test_a_trainer_that_wrote_its_result_is_done_not_stalled(tmp_path):
    watch = watch_of(tmp_path, startup_s=None)
    report(tmp_path, "worker-0", "timed windows done")
    report(tmp_path, "worker-1", "window 1/9")
    (tmp_path / "worker-0.result.json").write_text("{}")
    assert watch.check(101.0) is None
    report(tmp_path, "worker-1", "window 2/9", mtime_s=2.0)
    assert watch.check(105.0) is None
    assert watch.check(200.0) == STOPPED_STALL  # worker-1, silent since 105


def test_no_deadlines_no_stop(tmp_path):
    assert watch_of(tmp_path, startup_s=None, stall_s=None).check(1e9) is None


def step(returncode, text, stopped=None):
    return StepOutcome(returncode, stopped, 1.0, "12", "3", None, text)


def test_a_port_taken_on_a_node_is_a_clash_worth_a_relaunch():
    bind = "worker-1: E0000 Could not start gRPC server: Address already in use\n"
    assert port_clash(step(1, bind))
    assert not port_clash(step(1, "ValueError: bad model\n"))
    assert not port_clash(step(0, bind))  # the step succeeded: nothing to relaunch
    assert not port_clash(step(None, bind, STOPPED_TIMEOUT))  # cancelled by the watchdog
