"""One failure reason and one set of record fields for every launcher's outcome."""

from tfscale.launch.base import Outcome
from tfscale.launch.jobs import failure
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


def test_failure_reasons_name_signals_and_timeouts():
    spec = expand(parse_suite("name: r\ndefaults: {timeout_s: 5}\nmatrix: {model: [mlp]}\n", "r.yaml")).specs[0]

    def single(**how):  # a one-process config, as the local launcher reports it
        return failure(Outcome(1.0, {"worker-0": how.pop("part", None)}, ["worker-0"], None, **how), spec)

    assert single(stopped="timeout", stopped_how="process tree killed") == (
        "timeout",
        "timed out after 5 s (process tree killed)",
    )
    assert single(failed="", returncode=-11) == ("failed", "killed by signal SIGSEGV")
    assert single(failed="", returncode=-9) == (
        "failed",
        "killed by signal SIGKILL (also what the kernel's out-of-memory killer sends; see dmesg)",
    )
    assert single(failed="", returncode=1, part={"ok": False, "error": "ValueError: x"}) == ("failed", "ValueError: x")
    assert single(failed="", returncode=3) == ("failed", "worker exited with code 3 without a result")


def test_failure_reasons_of_clusters_and_slurm_steps():
    text = "name: r\ndefaults: {timeout_s: 5, strategy: parameter_server}\nmatrix: {nodes: [1]}\n"
    spec = expand(parse_suite(text, "r.yaml")).specs[0]
    parts = {"chief-0": None, "worker-0": {"ok": False, "error": "UnavailableError: x"}, "ps-0": None}
    cluster = Outcome(
        2.0,
        parts,
        ["chief-0"],
        None,
        stopped="timeout",
        stopped_how="cluster stopped",
        phases={"chief-0": "model built", "worker-0": "", "ps-0": "serving"},
    )
    assert failure(cluster, spec) == (
        "timeout",
        "timed out after 5 s (cluster stopped); last phase chief-0: model built, worker-0: not started, ps-0: serving",
    )
    server_done = Outcome(2.0, {"chief-0": None, "ps-0": None}, ["chief-0"], None, failed="ps-0", returncode=0)
    assert failure(server_done, spec) == ("failed", "ps-0: server exited before the chief finished")
    assert failure(Outcome(2.0, parts, ["chief-0"], None, failed="worker-0", returncode=1), spec) == (
        "failed",
        "worker-0: UnavailableError: x",
    )
    # Slurm cannot tell which rank failed: its own state line, then the first error any rank wrote
    step = Outcome(
        2.0,
        parts,
        ["chief-0"],
        None,
        failed="step 4.2",
        returncode=1,
        process="srun",
        launcher_reason="*** STEP 4.2 ON n1 CANCELLED AT 2026-12-02T13:59:16 DUE TO TIME LIMIT ***",
        time_limit=True,
    )
    assert failure(step, spec) == (
        "timeout",
        "step 4.2: *** STEP 4.2 ON n1 CANCELLED AT 2026-12-02T13:59:16 DUE TO TIME LIMIT ***; UnavailableError: x",
    )
    silent = Outcome(2.0, {"chief-0": None}, ["chief-0"], None, failed="step 4.3", returncode=1, process="srun")
    assert failure(silent, spec) == ("failed", "step 4.3: srun exited with code 1 without a result")
