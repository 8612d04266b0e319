"""The report's section "Energy and cost per example": examples per joule and per unit of money."""

from __future__ import annotations

import pandas as pd

from tfscale import metrics as m
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "energy"
TITLE = "Energy and cost per example"

INTRO = """Energy over the timed windows: on GPUs NVML's total-energy counters of the config's GPUs, summed over its
ranks; on CPUs the host's RAPL package counters (every process on the host; single-process configs only).
joules_per_example = energy_j / (energy_window_s &times; throughput). With <code>price_per_device_hour</code> in the
suite: cost_per_million_examples = price &times; devices / 3600 &times; 10<sup>6</sup> / throughput
(<code>tfscale/measures/energy.py</code>)."""


def body(context: Context) -> str | Omitted:
    """Examples per joule and per unit of money vs devices, where counters or a price gave them."""
    frame = context.view
    plots = [
        figures.energy_figure(frame, m.JOULES_PER_EXAMPLE, "examples per joule"),
        figures.energy_figure(frame, m.COST_PER_MILLION_EXAMPLES, "examples per unit of money"),
    ]
    plots = [figure_html(p) for p in plots if p is not None]
    if not plots:
        methods = sorted({str(v) for v in frame.get(m.ENERGY_METHOD, pd.Series(dtype=object)).dropna()})
        why = methods[0] if len(methods) == 1 else "no energy counter read and no price_per_device_hour given"
        return Omitted(why)
    return "\n".join([*plots, f'<p class="method">{INTRO}</p>'])
