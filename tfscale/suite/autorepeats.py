"""`repeats: auto`: which configs of a plan run in more than one fresh process, so that the run measures its
spread between processes at a small cost. Pure (no TF, no pandas): the planner applies it once every config is
known.

Why: one process's CI cannot see the spread between processes (process medians of one config spread ~6.5 % sd on
2 shared cores, against ~1.9 % half-widths within a process); tfscale.stats.repeats pools that spread over the configs
of a run that ran in 2+ processes and widens every config's CI by it. The quickstart chose its pairs by hand (each
workload's one-device baseline and its Mirrored x2 config); `auto` makes the same choice for any suite:

- per workload (tfscale.axes.WORKLOAD_AXES and the device), in suite order: its first 1-device config (OneDevice
  preferred: the scaling baseline every efficiency divides by) and its first 2-device config run in
  PROBE_PROCESSES processes each; every other `auto` config once;
- configs with a number of repeats keep it, and their processes count towards the spread;
- where that gives the run fewer than MIN_SPREAD_DF degrees of freedom (the processes less one, summed), the
  probes (or, without any, the first configs) get more processes, one at a time in suite order, until it has them:
  a spread from 1 or 2 degrees of freedom widens every CI by Student's t of 12.7 or 4.3.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tfscale.axes import AUTO, WORKLOAD_AXES
from tfscale.suite.spec import RunSpec

PROBE_PROCESSES = 2
MIN_SPREAD_DF = 3


def devices(spec: RunSpec) -> int:
    return spec.nodes * spec.devices_per_node


def workload(spec: RunSpec) -> tuple:
    """What makes configs one workload, whose 1-device config is the others' baseline (analysis.WORKLOAD_KEY)."""
    return (spec.device, *(getattr(spec, name) for name in WORKLOAD_AXES))


def probes(specs: Sequence[RunSpec]) -> list[int]:
    """Indices of the `auto` configs that measure the spread: per workload its first 1-device config (OneDevice
    preferred) and its first 2-device config, in suite order."""
    chosen: dict[tuple, dict[int, int]] = {}  # workload -> devices (1 or 2) -> index
    for index, spec in enumerate(specs):
        if spec.repeats != AUTO or devices(spec) not in (1, 2):
            continue
        slots = chosen.setdefault(workload(spec), {})
        held = slots.get(devices(spec))
        baseline_first = devices(spec) == 1 and spec.strategy == "one_device"
        if held is None or (baseline_first and specs[held].strategy != "one_device"):
            slots[devices(spec)] = index
    return sorted(index for slots in chosen.values() for index in slots.values())


def resolve(specs: Sequence[RunSpec]) -> tuple[RunSpec, ...]:
    """The specs with every `repeats: auto` replaced by a number of processes (module docstring)."""
    auto = [index for index, spec in enumerate(specs) if spec.repeats == AUTO]
    if not auto:
        return tuple(specs)
    counts = dict.fromkeys(auto, 1)
    chosen = probes(specs)
    counts |= dict.fromkeys(chosen, PROBE_PROCESSES)
    given = sum(spec.repeats - 1 for spec in specs if spec.repeats != AUTO)
    more, turn = chosen or auto, 0
    while given + sum(count - 1 for count in counts.values()) < MIN_SPREAD_DF:
        counts[more[turn % len(more)]] += 1
        turn += 1
    return tuple(
        dataclasses.replace(spec, repeats=counts[index]) if index in counts else spec
        for index, spec in enumerate(specs)
    )
