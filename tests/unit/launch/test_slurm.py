"""Pure parts of the Slurm launcher: allocation request, step geometry and command, Slurm's reasons."""

from tfscale.launch.srun import (
    CPUS_ON_NODE_SHELL,
    SlurmOptions,
    allocation_gpu_args,
    allocation_nodes,
    script_line,
    slurm_reason,
    srun_argv,
    step_geometry,
    step_gpus_per_node,
)
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

SPECS = expand(
    parse_suite(
        """
name: s
defaults: {timeout_s: 61, repeats: 1}
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


GPU_SPECS = expand(
    parse_suite(
        """
name: g
device: gpu
defaults: {timeout_s: 61, repeats: 1}
matrix: {strategy: [mirrored], devices_per_node: [8]}
include:
  - {strategy: multi_worker_mirrored, nodes: 2, devices_per_node: 4}
  - {strategy: parameter_server, nodes: 2, devices_per_node: 1, num_ps: 1}
""",
        "g.yaml",
    )
).specs


def test_gpu_steps_ask_for_each_node_s_gpus_and_cpus():
    mirrored, mwms, ps = GPU_SPECS
    assert [step_gpus_per_node(s, 2) for s in GPU_SPECS] == [8, 4, 1]  # PS: chief+worker-0 | worker-1+ps-0
    assert step_gpus_per_node(mwms, 1) == 8  # both ranks on the one node
    assert step_gpus_per_node(SPECS[1], 4) == 0  # CPU suites ask for none
    argv = srun_argv(mwms, 2, ["w"], job_id="7", cpus_per_node=64)
    assert argv[:9] == [
        "srun",
        "--jobid=7",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--distribution=block",
        "--gpus-per-node=4",
        "--cpus-per-task=64",
        f"--job-name=tfscale-{mwms.config_id}",
    ]
    assert "--overcommit" not in argv
    ps_argv = srun_argv(ps, 2, ["w"], cpus_per_node=CPUS_ON_NODE_SHELL)
    assert "--cpus-per-task=$(( SLURM_CPUS_ON_NODE / 2 ))" in ps_argv and "--gpus-per-node=1" in ps_argv
    assert script_line(ps_argv).count("'") == 0  # the shell arithmetic is not quoted away
    assert "--cpus-per-task" not in " ".join(srun_argv(mirrored, 2, ["w"]))  # CPUs unknown: Slurm's default
    assert allocation_gpu_args(GPU_SPECS, 2) == ["--gpus-per-node=8", "--exclusive"]
    assert allocation_gpu_args(SPECS, 4) == []
    assert SlurmOptions().salloc_args(2, "x", ["--gpus-per-node=8"]) == [
        "salloc",
        "--no-shell",
        "--nodes=2",
        "--job-name=x",
        "--gpus-per-node=8",
    ]


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


def test_the_batch_job_s_time_covers_its_steps_one_after_another():
    from tfscale.launch.srun import batch_time_limit

    assert batch_time_limit(SPECS) == "0:06:00"  # three steps of 61 s: 2 minutes each
    assert batch_time_limit(SPECS * 25) == "2:30:00"
