"""Sweep progress as one line per finished config: a bar, configs done, ETA, and what just finished."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale.axes import DATA_FILES
from tfscale.labels import model_label, record_mode

BAR_WIDTH = 20


def eta_text(elapsed_s: float, done: int, total: int) -> str:
    """Remaining time at the mean pace so far, as M:SS (H:MM:SS past an hour); "?" before the first config."""
    if done == 0:
        return "?"
    remaining = round(elapsed_s / done * (total - done))
    hours, rest = divmod(remaining, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def progress_line(done: int, total: int, elapsed_s: float, record: dict[str, Any]) -> str:
    filled = BAR_WIDTH * done // total
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    link = f" @{record[m.NETWORK_LINK]}" if record.get(m.NETWORK_LINK) else ""
    how = record_mode(record)
    what = f"{model_label(record[m.MODEL], record.get(m.MODEL_SIZE))} {how} x{record[m.DEVICES]}{link}"
    if (record.get(m.REPEATS) or 1) > 1:
        what += f" (process {record[m.REPEAT] + 1}/{record[m.REPEATS]})"
    if record[m.STATUS] == m.STATUS_OK:
        outcome = f"ok, {record[m.STEP_TIME_MEDIAN_S] * 1e3:.2f} ms/step"
    else:
        outcome = f"{record[m.STATUS]}: {record[m.REASON]}"
    if record.get(m.DATA) == DATA_FILES and record[m.STATUS] == m.STATUS_OK:
        what += " files"
        if record.get(m.INPUT_BOUND):
            outcome += ", input-bound"
    width = len(str(total))
    line = f"[{bar}] {done:{width}d}/{total} ETA {eta_text(elapsed_s, done, total):>7}  {what}: {outcome}"
    return line + dataset_line(record)


def dataset_line(record: dict[str, Any]) -> str:
    """A second line when the config wrote its dataset files: where, how large, how long it took ('' otherwise)."""
    seconds = record.get(m.DATA_GENERATION_S)
    if not seconds:  # none written (synthetic data, or the files were reused)
        return ""
    size = fmt.size(record.get(m.DATA_CACHE_BYTES))
    return f"\n  wrote its dataset files ({size}, {seconds:.2f} s), reused from now on: {record[m.DATA_CACHE_PATH]}"


class Progress:
    """Callback for runner.run_plan: prints a progress line per finished config."""

    def __init__(self, total: int, echo: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self.total, self.echo, self.clock = total, echo, clock
        self.start = clock()

    def __call__(self, index: int, record: dict[str, Any]) -> None:
        self.echo(progress_line(index + 1, self.total, self.clock() - self.start, record))
