"""`tfscale launch`: what a real cluster needs to run a suite's configs, written to a folder. Pure: no TF.

Each target is a launcher's `script` (tfscale.launch.TARGETS): slurm, one batch script of `srun` job steps (the
same `srun` line `tfscale run --launcher slurm` starts); kubernetes, per config a ConfigMap and a TFJob;
hosts, per config the command to run on each host with its TF_CONFIG.

Every task writes its result part to `results/<config_id>.<task>.result.json` under the output folder (the shared
filesystem or volume); merging those into records is the job of the runner that launched them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from tfscale import contract
from tfscale.errors import TfscaleError
from tfscale.launch import checks
from tfscale.launch.base import spec_file
from tfscale.store.records import write_atomic, write_json_atomic
from tfscale.suite.planner import Plan

SPEC_ORDER_FILE = "order.json"  # specs/order.json: the config ids in plan order (tfscale collect keeps it)


@dataclass(frozen=True)
class LaunchOptions:
    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None  # slurm: None: the sum of the steps' timeout_s (srun.batch_time_limit)
    port_base: int = contract.DEFAULT_PORT_BASE
    image: str | None = None  # kubernetes: required, an image with tfscale installed (docker/Dockerfile builds one)
    hosts: tuple[str, ...] = ()
    python: str | None = None  # None: each target's own (worker_python)
    pod_cpus: int = 8  # kubernetes: CPUs each pod requests
    pod_memory: str = "32Gi"  # kubernetes: memory each pod requests (and is limited to)

    def __post_init__(self) -> None:
        """Refuse, naming the option, a value that is not of its tool's syntax (tfscale.launch.checks)."""
        checks.check_slurm_names("--partition", self.partition)
        checks.check_slurm_names("--account", self.account)
        checks.check_time("--time-limit", self.time_limit)
        checks.check_port("--port-base", self.port_base)
        if self.image is not None:
            checks.check_pattern("--image", self.image, checks.IMAGE, "an image is [registry/]path[:tag][@digest]")
        for host in self.hosts:
            checks.check_host("--hosts", host)
        if self.python is not None:
            checks.check_text("--python", self.python)
        if not 1 <= self.pod_cpus <= 4096:
            raise TfscaleError(f"--pod-cpus {self.pod_cpus}: must be 1 to 4096")
        checks.check_pattern("--pod-memory", self.pod_memory, checks.QUANTITY, "a Kubernetes quantity such as 32Gi")


def write_specs(plan: Plan, out: Path) -> None:
    (out / "specs").mkdir(parents=True, exist_ok=True)
    (out / "results").mkdir(exist_ok=True)
    write_json_atomic(out / "specs" / SPEC_ORDER_FILE, [spec.config_id for spec in plan.specs])
    for spec in plan.specs:
        # User-model modules are imported from the folder the worker runs in (copy them beside the specs).
        portable = dataclasses.replace(spec, suite_dir=".")
        write_json_atomic(out / spec_file(spec), portable.to_dict())


def emit(plan: Plan, target: str, out: Path, options: LaunchOptions) -> list[Path]:
    """Write the target's files and the specs they reference into `out`; return the files written."""
    from tfscale.launch import TARGETS

    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; allowed: {', '.join(TARGETS)}")
    files = TARGETS[target].script(plan, out, options)  # before writing anything: it may refuse the options
    out.mkdir(parents=True, exist_ok=True)
    write_specs(plan, out)
    written = []
    for name, text in files.items():
        path = out / name
        write_atomic(path, text)
        written.append(path)
    return written
