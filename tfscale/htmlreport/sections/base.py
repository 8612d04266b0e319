"""What every section of the report is made of: the data it reads (Context) and what it gives (its HTML, or
Omitted with the reason it has nothing to show)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Omitted:
    """A section left out of the report: nothing of it ran. `reason` goes into the contents."""

    reason: str


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    body: str | Omitted


@dataclass(frozen=True)
class Context:
    """What a section reads: the analysed records, the view the plots and section tables show (one row per config
    over many runs: htmlreport.plot_view) with its note, each run's environment, the commbench sweeps and the
    telemetry series by config label."""

    frame: pd.DataFrame
    view: pd.DataFrame
    view_note: str = ""
    envs: dict = field(default_factory=dict)
    sweeps: list = field(default_factory=list)
    series: dict = field(default_factory=dict)
