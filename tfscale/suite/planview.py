"""What `tfscale plan` and `tfscale run` print about a plan before it runs: its table and its one-line notes. Pure
(no TensorFlow, no pandas)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tfscale import contract
from tfscale.labels import data_label, model_label
from tfscale.suite.planner import Plan


def network_note(plan: Plan, reason: str | None) -> str | None:
    """One line when configs need simulated networking and `reason` says it is unavailable here."""
    count = sum(1 for s in plan.specs if s.network_link is not None)
    if not count or reason is None:
        return None
    return f"note: {reason}; {count} config(s) with network_link will be skipped"


SPREAD_NOTE = (
    "note: no config runs in 2 or more fresh processes (repeats), so the run measures no spread between processes, "
    "usually larger than within one: the CIs cover it only through the suite's earlier runs on this machine, where "
    "some measured it, and the drift between them (tfscale/stats/repeats.py, drift.py); repeats: auto runs a few "
    "configs twice and measures it for the whole run"
)


def nccl_link_note(plan: Plan) -> str | None:
    """One line for a GPU suite with simulated hosts: the NCCL settings that keep its collectives on the link."""
    count = sum(1 for s in plan.specs if s.network_link is not None and s.device == "gpu")
    if not count:
        return None
    return f"note: {count} GPU config(s) with network_link run NCCL with {contract.simulated_link_nccl_note()}"


def spread_note(plan: Plan) -> str | None:
    """SPREAD_NOTE where no config of `plan` runs in more than one process (nothing measures the run's spread)."""
    return SPREAD_NOTE if plan.specs and all(spec.repeats < 2 for spec in plan.specs) else None


def plan_rows(plan: Plan) -> list[dict[str, Any]]:
    """The plan as table rows, in the columns `tfscale plan` prints."""
    return [
        {
            "config_id": s.config_id,
            "model": model_label(s.model, s.model_size),
            "strategy": (
                s.strategy + (f"({s.cross_device_ops})" if s.cross_device_ops else "") if s.strategy else s.mode_label
            ),
            "nodes": s.nodes,
            "dev/node": s.devices_per_node,
            "replicas": s.replicas,
            "link": s.network_link or "",
            "batch": f"{s.batch_size} {s.batch_policy}",
            "global": s.global_batch_size,
            "precision": s.precision,
            "jit": "on" if s.jit else "off",
            "opt": s.optimizer,
            "data": data_label(dataclasses.asdict(s)) or s.data,
            "steps": f"{s.warmup_steps}+{s.steps}" + (f" x{s.repeats}" if s.repeats > 1 else ""),  # x: processes
            "timeout_s": f"{s.timeout_s:g}",
        }
        for s in plan.specs
    ]
