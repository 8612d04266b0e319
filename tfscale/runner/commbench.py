"""`tfscale commbench` and the suite option `commbench`: the all-reduce alone over message sizes, per topology.

A topology is what decides how gradients travel: strategy, nodes, devices per node, device kind and the
strategy's communication options. The sweep runs in worker process(es) like any config (a cluster for
MultiWorkerMirrored), prints an nccl-tests-like table, is stored as JSONL, and its alpha-beta fit gives each
record of the same topology `comm_time_model_s` at the record's gradient bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale import metrics as m
from tfscale.axes import STRATEGIES
from tfscale.errors import TfscaleError
from tfscale.launch.base import Launcher
from tfscale.launch.jobs import failure, new_job, run_job
from tfscale.measures.comm import AlphaBeta, algbw, busbw, fit_alpha_beta, sweep_sizes
from tfscale.store.records import COMMBENCH_FILE, LOGS_DIR, append_record, read_records
from tfscale.suite.planner import expand
from tfscale.suite.spec import RunSpec
from tfscale.suite.suitefile import Suite

TOPOLOGY_FIELDS = (
    "device",
    "strategy",
    "nodes",
    "devices_per_node",
    "cross_device_ops",
    "collective",
    "bytes_per_pack",
    "network_link",
)


@dataclass(frozen=True)
class Row:
    size_bytes: int
    time_s: float  # median of the timed calls
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float


@dataclass(frozen=True)
class Sweep:
    topology: dict[str, Any]
    replicas: int
    rows: list[Row]
    fit: AlphaBeta
    method: str
    link_bytes_per_s: float | None = None  # simulated hosts: the configured link rate
    link_measured_bytes_per_s: float | None = None  # simulated hosts: TCP check of the link before the sweep

    def to_record(self) -> dict[str, Any]:
        return {
            "kind": "commbench",
            **self.topology,
            "replicas": self.replicas,
            "rows": [dataclasses.asdict(r) for r in self.rows],
            "alpha_s": self.fit.alpha_s,
            "beta_s_per_byte": self.fit.beta_s_per_byte,
            "method": self.method,
            "link_bytes_per_s": self.link_bytes_per_s,
            "link_measured_bytes_per_s": self.link_measured_bytes_per_s,
        }


def topology(spec: RunSpec) -> dict[str, Any] | None:
    """The spec's communication topology, or None where there is no all-reduce to sweep (one replica, PS)."""
    if spec.replicas < 2 or spec.parallelism != "data" or spec.strategy == "parameter_server":
        return None
    return {name: getattr(spec, name) for name in TOPOLOGY_FIELDS}


def topology_spec(device: str, strategy: str, nodes: int, devices_per_node: int, **options: Any) -> RunSpec:
    """A validated spec for a topology given on the command line (the plan's checks apply)."""
    if strategy not in STRATEGIES or strategy in ("one_device", "parameter_server"):
        raise TfscaleError(
            f"commbench: strategy {strategy!r} has no all-reduce to time; use mirrored, "
            "central_storage or multi_worker_mirrored"
        )
    defaults = {
        "strategy": strategy,
        "nodes": nodes,
        "devices_per_node": devices_per_node,
        **{k: v for k, v in options.items() if v is not None},
    }
    suite = Suite(name="commbench", device=device, defaults=defaults, matrix={"model": ["mlp"]}, path="commbench")
    spec = expand(suite).specs[0]
    if options.get("network_link") and spec.network_link is None:  # the plan drops a link where none is crossed
        raise TfscaleError(
            "commbench: --link simulates the links between nodes: use --strategy "
            "multi_worker_mirrored with --nodes 2 or more"
        )
    return spec


def sweep_spec(spec: RunSpec, sizes: list[int], iters: int, warmup: int) -> RunSpec:
    return dataclasses.replace(spec, steps=iters, warmup_steps=warmup, extra={**spec.extra, "sizes": sizes})


def run_sweep(spec: RunSpec, folder: Path, launcher: Launcher) -> Sweep:
    """Run the sweep of a sweep_spec in fresh worker process(es) through `launcher`, as any config runs; raise
    TfscaleError when it cannot run or fails."""
    where = f"commbench on {spec.strategy} x{spec.devices}"
    reason = launcher.unavailable(spec)
    if reason is not None:
        raise TfscaleError(f"{where}: {reason}")
    job = new_job(spec, folder, folder.name, prefix=f"commbench-{spec.config_id}", mode=contract.COMMBENCH)
    outcome = run_job(launcher, job)
    if not outcome.ok:
        raise TfscaleError(f"{where}: {failure(outcome, spec)[1]} (logs in {folder / LOGS_DIR})")
    sweep = merge_sweeps([outcome.parts[name]["measurements"] for name in outcome.trainers], topology(spec) or {})
    return dataclasses.replace(
        sweep,
        link_bytes_per_s=spec.link_bytes_per_s,
        link_measured_bytes_per_s=outcome.columns.get(m.LINK_MEASURED_BYTES_PER_S),
    )


def merge_sweeps(parts: list[dict[str, Any]], topo: dict[str, Any]) -> Sweep:
    """One sweep from the ranks' sweeps: per size, the slowest rank's median (a collective ends for all)."""
    replicas = parts[0]["replicas"]
    rows = []
    for index, first in enumerate(parts[0]["rows"]):
        size = first["size_bytes"]
        seconds = max(p["rows"][index]["time_s"] for p in parts)
        rows.append(Row(size, seconds, algbw(size, seconds), busbw(size, seconds, replicas)))
    fit = fit_alpha_beta([r.size_bytes for r in rows], [r.time_s for r in rows], replicas)
    method = parts[0]["method"] + (f"; slowest of {len(parts)} ranks per size" if len(parts) > 1 else "")
    return Sweep(topo, replicas, rows, fit, method)


def format_sweep(sweep: Sweep) -> str:
    """nccl-tests-like table and the fitted model."""
    lines = [
        f"# all-reduce (sum, float32) on {sweep.topology.get('strategy')}: {sweep.replicas} replicas, "
        f"{sweep.topology.get('nodes')} node(s) x {sweep.topology.get('devices_per_node')} "
        f"{sweep.topology.get('device')} device(s)",
        f"# {'size(B)':>10}  {'time(us)':>10}  {'algbw(GB/s)':>11}  {'busbw(GB/s)':>11}",
    ]
    for r in sweep.rows:
        lines.append(
            f"  {r.size_bytes:>10d}  {r.time_s * 1e6:>10.1f}  {r.algbw_bytes_per_s / 1e9:>11.3f}  "
            f"{r.busbw_bytes_per_s / 1e9:>11.3f}"
        )
    if sweep.link_bytes_per_s:
        measured = (
            f", TCP check {sweep.link_measured_bytes_per_s / 1e9:.4f} GB/s" if sweep.link_measured_bytes_per_s else ""
        )
        lines.insert(
            1,
            f"# simulated hosts: link {sweep.topology.get('network_link')} = "
            f"{sweep.link_bytes_per_s / 1e9:.4f} GB/s per node and direction{measured}",
        )
    inverse = 1 / sweep.fit.beta_s_per_byte / 1e9 if sweep.fit.beta_s_per_byte > 0 else float("inf")
    lines.append(
        f"# fit T(S) = alpha + beta*S*2(n-1)/n: alpha = {sweep.fit.alpha_s * 1e6:.1f} us, "
        f"beta = {sweep.fit.beta_s_per_byte * 1e9:.4f} ns/B (1/beta = {inverse:.3f} GB/s)"
    )
    return "\n".join(lines)


def store_sweep(sweep: Sweep, folder: Path) -> Path:
    path = folder / COMMBENCH_FILE
    append_record(path, sweep.to_record())
    return path


def sizes_between(min_bytes: int, max_bytes: int) -> list[int]:
    sizes = sweep_sizes(min_bytes, max_bytes)
    if len(sizes) < 2:
        raise TfscaleError(f"commbench: sizes {min_bytes}..{max_bytes} give fewer than two powers of two")
    return sizes


def topology_key(spec: RunSpec) -> tuple | None:
    """A hashable form of the spec's topology (None where there is no all-reduce)."""
    topo = topology(spec)
    return None if topo is None else tuple(sorted(topo.items()))


def stored_fits(folder: Path) -> dict[tuple, AlphaBeta]:
    """Fits of the sweeps a run folder already holds, by topology key."""
    path = folder / COMMBENCH_FILE
    if not path.exists():
        return {}
    # sweeps stored before network_link existed ran over loopback: .get gives them None
    return {
        tuple(sorted((k, r.get(k)) for k in TOPOLOGY_FIELDS)): AlphaBeta(
            r["alpha_s"], r["beta_s_per_byte"], r["replicas"]
        )
        for r in read_records(path)
    }


def sweep_topologies(
    specs: tuple[RunSpec, ...], settings, folder: Path, launcher: Launcher
) -> tuple[dict[tuple, AlphaBeta], list[str]]:
    """The suite's sweep once per topology of `specs`, reusing sweeps the folder already has (a resumed run).
    Returns the fits by topology key and the errors of sweeps that failed (reported, not fatal)."""
    fits, errors = stored_fits(folder), []
    for spec in specs:
        key = topology_key(spec)
        if key is None or key in fits:
            continue
        try:
            sweep = run_sweep(
                sweep_spec(
                    spec, sizes_between(settings.min_bytes, settings.max_bytes), settings.iters, settings.warmup
                ),
                folder,
                launcher,
            )
        except TfscaleError as error:
            errors.append(str(error))
            continue
        store_sweep(sweep, folder)
        fits[key] = sweep.fit
    return fits, errors
