"""`tfscale compare BASE NEW` from disk: each side's records (one run per config), environment and run settings,
compared config by config (analysis.compare), with everything that makes the two sides unlike named first: settings
that differ between matched configs, other hardware, other software. Parent side: no TF."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from tfscale.analysis.compare import (
    Lost,
    SettingDifference,
    compare,
    env_differences,
    latest_runs,
    lost_configs,
    machine_differences,
    setting_differences,
)
from tfscale.jsonout import table
from tfscale.store.records import find_records_files, load_env, load_results
from tfscale.store.runfolder import run_settings


@dataclass(frozen=True)
class Comparison:
    rows: pd.DataFrame  # tfscale.analysis.compare.compare: one row per config ok on both sides
    lost: list[Lost]  # ok in BASE, not ok or missing in NEW
    settings: list[SettingDifference]  # run settings that differ between matched configs
    machine: list[tuple[str, str, str]]  # (key, BASE, NEW) where the hardware differs
    env: list[tuple[str, str, str]]  # (key, BASE, NEW) for every environment entry that differs
    notes: list[str] = field(default_factory=list)  # how each side was read (several runs: each config's latest)

    def unlike(self) -> list[str]:
        """What makes BASE and NEW measure unlike things: timing settings and hardware that differ."""
        return [d.line() for d in self.settings if d.timing] + [f"{k}: {a} -> {b}" for k, a, b in self.machine]

    def warnings(self) -> list[str]:
        """The lines a reader needs before the figures, most important first."""
        lines = [f"settings differ: {d.line()}" for d in self.settings]
        lines += [f"machine differs: {k}: {a} -> {b}" for k, a, b in self.machine]
        return lines + self.notes

    def document(self) -> dict:
        """What the terminal and the HTML comparison show, as JSON holds it (`compare --json`)."""
        return {
            "warnings": self.warnings(),
            "unlike": self.unlike(),
            "configs": table(self.rows),
            "lost": [{**asdict(config), "line": config.line()} for config in self.lost],
            "settings": [asdict(difference) for difference in self.settings],
            "env_differences": [{"key": k, "base": a, "new": b} for k, a, b in self.env],
        }


def _side(path: str | Path, name: str) -> tuple[pd.DataFrame, dict, list[str]]:
    """A side's records, one per config; the environment of its newest run folder (run ids sort by time); notes."""
    records, runs = latest_runs(load_results(path))
    note = [f"{name} holds {runs} runs: each config is compared as its latest run measured it"] if runs > 1 else []
    return records, load_env(find_records_files(path)[-1].parent), note


def compare_paths(base: str | Path, new: str | Path, threshold: float = 0.05) -> Comparison:
    """BASE and NEW (run folders, suite folders or records files) compared, with what makes them unlike."""
    base_records, base_env, base_note = _side(base, "BASE")
    new_records, new_env, new_note = _side(new, "NEW")
    settings = run_settings(base) | run_settings(new)
    return Comparison(
        rows=compare(base_records, new_records, threshold),
        lost=lost_configs(base_records, new_records),
        settings=setting_differences(base_records, new_records, settings),
        machine=machine_differences(base_env, new_env),
        env=env_differences(base_env, new_env),
        notes=base_note + new_note,
    )
