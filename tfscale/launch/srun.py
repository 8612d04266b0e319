"""What tfscale asks Slurm for, pure (no Slurm needed): the allocation's salloc arguments and node count, each
config's job step geometry (nodes, tasks per node, GPUs per node), its srun command line, the batch script's lines
and time limit, and the environment a step's ranks learn their ports from.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass

from tfscale import contract
from tfscale.launch import checks
from tfscale.suite.spec import RunSpec


@dataclass(frozen=True)
class SlurmOptions:
    """How the allocation is requested when tfscale is not already inside one."""

    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None  # salloc --time syntax, e.g. "2:00:00"
    extra: tuple[str, ...] = ()  # further salloc arguments, e.g. ("--gres=gpu:4",)

    def __post_init__(self) -> None:
        checks.check_slurm_names("--partition", self.partition)
        checks.check_slurm_names("--account", self.account)
        checks.check_time("--time-limit", self.time_limit)
        for arg in self.extra:
            checks.check_text("--slurm-arg", arg)

    def salloc_args(self, nodes: int, name: str, gpu_args: list[str] | None = None) -> list[str]:
        args = ["salloc", "--no-shell", f"--nodes={nodes}", f"--job-name={name}", *(gpu_args or [])]
        args += [f"--partition={self.partition}"] if self.partition else []
        args += [f"--account={self.account}"] if self.account else []
        args += [f"--time={self.time_limit}"] if self.time_limit else []
        return args + list(self.extra)


def allocation_nodes(specs: tuple[RunSpec, ...], available: int | None) -> int:
    """Nodes to ask for: the most any config has, but no more than the partition has (a config with more TF
    workers than nodes then runs several ranks per node)."""
    wanted = max((s.nodes for s in specs), default=1)
    return max(1, min(wanted, available)) if available else wanted


def step_geometry(spec: RunSpec, allocation_nodes: int) -> tuple[int, int]:
    """(Slurm nodes, tasks) of a config's step: one task per TF task (one for single-process configs), spread over
    as many of the allocation's nodes as the config has nodes."""
    tasks = len(contract.tasks_of(spec))
    return max(1, min(spec.nodes, allocation_nodes, tasks)), tasks


def tasks_per_node_at_most(spec: RunSpec, allocation_nodes: int) -> int:
    """The most tasks of the step on one node (GPU steps ask srun for exactly this many per node)."""
    nodes, tasks = step_geometry(spec, allocation_nodes)
    return math.ceil(tasks / nodes)


def step_gpus_per_node(spec: RunSpec, allocation_nodes: int) -> int:
    """GPUs a GPU config's step asks for on each node. With block distribution and at most k tasks per node, a
    node holds k consecutive ranks: exactly ranks jk..jk+k-1 when the tasks fill every node, else some k or
    fewer consecutive ones, so the neediest k consecutive tasks bound it. Parameter servers and the
    ParameterServer chief need none (contract.gpus_of). 0 on CPU suites."""
    need = contract.gpu_needs(spec)
    nodes, tasks = step_geometry(spec, allocation_nodes)
    k = tasks_per_node_at_most(spec, allocation_nodes)
    starts = range(0, tasks, k) if nodes * k == tasks else range(max(1, tasks - k + 1))
    return max(sum(need[i : i + k]) for i in starts)


def step_name(spec: RunSpec) -> str:
    return f"tfscale-{spec.config_id}"


# In the batch script the CPUs of a node are known only inside the job: the shell divides them among the tasks.
CPUS_ON_NODE_SHELL = "$(( SLURM_CPUS_ON_NODE / {k} ))"


def srun_argv(
    spec: RunSpec,
    allocation_nodes: int,
    worker: list[str],
    job_id: str | None = None,
    cpus_per_node: int | str | None = None,
) -> list[str]:
    """The `srun` line of one config's job step, for `tfscale run --launcher slurm` (with the job id of its
    allocation) and for the batch script `tfscale launch --target slurm` writes (inside the job: no id).

    CPU suites overcommit (several ranks may share a core on a small test host). GPU suites place tasks by block
    with at most k per node, ask for each node's GPUs (step_gpus_per_node; the ranks split them with
    contract.place_gpus) and give each task its share of the node's CPUs (`cpus_per_node` // k; the default
    binding of one CPU per task would leave an 8-GPU process on one core)."""
    nodes, tasks = step_geometry(spec, allocation_nodes)
    minutes = max(1, math.ceil(spec.timeout_s / 60))  # Slurm's own limit on the step, beside tfscale's watchdog
    jobid = [f"--jobid={job_id}"] if job_id else []
    if spec.device == "gpu":
        k = tasks_per_node_at_most(spec, allocation_nodes)
        placing = [f"--ntasks-per-node={k}", "--distribution=block"]
        gpus = step_gpus_per_node(spec, allocation_nodes)
        placing += [f"--gpus-per-node={gpus}"] if gpus else []
        if isinstance(cpus_per_node, int):
            placing.append(f"--cpus-per-task={max(1, cpus_per_node // k)}")
        elif isinstance(cpus_per_node, str):
            placing.append(f"--cpus-per-task={cpus_per_node.format(k=k)}")
    else:
        placing = ["--overcommit"]
    return [
        "srun",
        *jobid,
        f"--nodes={nodes}",
        f"--ntasks={tasks}",
        *placing,
        f"--job-name={step_name(spec)}",
        "--kill-on-bad-exit=1",
        f"--time={minutes}",
        "--export=ALL",
        *worker,
    ]


def script_line(argv: list[str]) -> str:
    """A command line for the batch script: every argument quoted but the shell arithmetic of CPUS_ON_NODE_SHELL."""
    return " ".join(a if a.startswith("--cpus-per-task=$") else shlex.quote(a) for a in argv)


def batch_time_limit(specs) -> str:
    """A batch job's time limit that covers its steps run one after another: the sum of each step's own limit
    (srun_argv's --time, timeout_s rounded up to minutes) over every repeat of every config, as Slurm's H:MM:00."""
    minutes = sum(max(1, math.ceil(s.timeout_s / 60)) * s.repeats for s in specs)  # each repeat is a step
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def allocation_gpu_args(specs: tuple[RunSpec, ...], allocation_nodes: int) -> list[str]:
    """What the allocation asks for on GPU suites: the most GPUs per node any step asks for, and whole nodes
    (--exclusive: every CPU of the node, for the steps to share out)."""
    gpus = max((step_gpus_per_node(s, allocation_nodes) for s in specs), default=0)
    return [f"--gpus-per-node={gpus}", "--exclusive"] if gpus else []


def step_env(port_base: int) -> dict[str, str]:
    """What every rank of a step needs besides Slurm's own variables: build its cluster from them
    (worker.cluster.slurm_environment) on ports from `port_base`, and take its share of the step's GPUs."""
    return {contract.RESOLVER_ENV: contract.RESOLVER_SLURM, contract.PORT_BASE_ENV: str(port_base)}


SLURM_STATE = re.compile(r"\*\*\* .* \*\*\*")  # slurmstepd's "*** STEP 12.3 ON n1 CANCELLED AT ... ***"

SLURM_ERROR = re.compile(r"(?:srun|slurmstepd\S*): error: .*")


def slurm_reason(output: str) -> str | None:
    """Slurm's own words about a step that did not end well: its state line (cancelled, time limit, node
    failure) when there is one, else srun's last error line."""
    found = SLURM_STATE.findall(output) or SLURM_ERROR.findall(output)
    return found[-1].strip() if found else None
