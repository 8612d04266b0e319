"""Pure parts of the Slurm launcher: allocation request, step geometry and command, Slurm's reasons."""

from tfscale.launch.slurm import SlurmOptions, allocation_nodes, slurm_reason, srun_argv, step_geometry
from tfscale.plan import expand
from tfscale.suite import parse_suite

SPECS = expand(
    parse_suite(
        """
name: s
defaults: {timeout_s: 61}
matrix: {strategy: [one_device]}
include:
  - {strategy: multi_worker_mirrored, nodes: 4}
  - {strategy: parameter_server, nodes: 2, num_ps: 1}
""",
        "s.yaml",
    )
).specs


def test_salloc_arguments():
    options = SlurmOptions("gpu", "proj", "1:00:00", ("--gres=gpu:4",))
    assert options.salloc_args(2, "tfscale-s") == [
        "salloc",
        "--no-shell",
        "--nodes=2",
        "--job-name=tfscale-s",
        "--partition=gpu",
        "--account=proj",
        "--time=1:00:00",
        "--gres=gpu:4",
    ]
    assert SlurmOptions().salloc_args(1, "x") == ["salloc", "--no-shell", "--nodes=1", "--job-name=x"]


def test_allocation_asks_for_the_most_nodes_the_partition_has():
    assert allocation_nodes(SPECS, None) == 4
    assert allocation_nodes(SPECS, 2) == 2
    assert allocation_nodes(SPECS[:1], 8) == 1


def test_step_geometry_one_task_per_tf_task():
    single, mwms, ps = SPECS
    assert step_geometry(single, 4) == (1, 1)
    assert step_geometry(mwms, 4) == (4, 4)
    assert step_geometry(mwms, 1) == (1, 4)  # a one-node allocation runs the 4 ranks side by side
    assert step_geometry(ps, 4) == (2, 4)  # chief, 2 workers, 1 ps over the config's 2 nodes


def test_srun_argv():
    argv = srun_argv(SPECS[1], 2, ["python", "-m", "tfscale.worker"], job_id="12")
    assert argv == [
        "srun",
        "--jobid=12",
        "--nodes=2",
        "--ntasks=4",
        "--overcommit",
        f"--job-name=tfscale-{SPECS[1].config_id}",
        "--kill-on-bad-exit=1",
        "--time=2",
        "--export=ALL",
        "python",
        "-m",
        "tfscale.worker",
    ]
    # inside the batch script the step is in the job already: the same line without --jobid
    assert srun_argv(SPECS[1], 2, ["w"]) == [a for a in argv if not a.startswith("--jobid")][:-3] + ["w"]


def test_slurm_reason_prefers_the_step_state():
    output = (
        "srun: error: n1: task 0: Killed\nslurmstepd-n1: error: *** STEP 3.1 ON n1 CANCELLED AT "
        "2026-12-02T13:59:16 DUE TO TIME LIMIT ***\nsrun: Job step aborted\nsrun: error: n1: task 1: Killed\n"
    )
    assert slurm_reason(output) == "*** STEP 3.1 ON n1 CANCELLED AT 2026-12-02T13:59:16 DUE TO TIME LIMIT ***"
    assert slurm_reason("srun: error: n1: task 0: Exited with exit code 1\n") == (
        "srun: error: n1: task 0: Exited with exit code 1"
    )
    assert slurm_reason("all fine\n") is None
