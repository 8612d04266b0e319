"""A sweep as a TensorBoard HParams experiment: the axes are hyperparameters, each config a session (trial), the
figures its metrics, so TensorBoard's HParams dashboard can filter, sort and plot a sweep the way it does a
hyperparameter search (`tfscale export RUN --format tensorboard -o DIR`).

Written with TensorBoard's own protos and event-file writer (the `tensorboard` package, an optional extra), not
with tf.summary: the parent process never imports TensorFlow. Layout, as `hp.hparams_config` and `hp.hparams`
write it: DIR holds the experiment (every hyperparameter with the values the sweep took, every metric); DIR/<trial>
one session each, its hyperparameter values and one scalar per metric at step 0.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
import types
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.axes import AXES
from tfscale.errors import TfscaleError
from tfscale.untrusted import is_name

# The figures of a config that become metrics (their descriptions: tfscale/metrics.py).
METRICS = (
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.STEP_TIME_MEDIAN_S,
    m.STEP_TIME_CI95_LOW_S,
    m.STEP_TIME_CI95_HIGH_S,
    m.SPEEDUP,
    m.SCALING_EFFICIENCY,
    m.SCALING_EFFICIENCY_CI95_LOW,
    m.SCALING_EFFICIENCY_CI95_HIGH,
    m.PEAK_MEMORY_BYTES,
    m.COMM_TIME_EXPOSED_S,
    m.COMM_TIME_ISOLATED_S,
)
# Hyperparameters besides the axes: how many devices in all, whether the config ran, and the run when several are
# exported together.
EXTRA_HPARAMS = (m.DEVICES, m.STATUS)


def _tensorboard():
    """TensorBoard's hparams API and event writer (imported late: an optional extra)."""
    # TensorBoard's own switch to its TF stub (what its //tensorboard/compat:no_tensorflow target provides: an
    # empty module of this name): without it, the event writer imports TensorFlow for tf.io.gfile when TF is
    # installed (3 s here), and the parent process never imports TensorFlow.
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.plugins.hparams import summary_v2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as error:
        raise TfscaleError(
            f"--format tensorboard needs the tensorboard package (pip install 'tfscale[tensorboard]'): {error}"
        ) from None
    return types.SimpleNamespace(hp=summary_v2, event_pb2=event_pb2, summary_pb2=summary_pb2, Writer=EventFileWriter)


def _plain(value: Any) -> Any:
    """A cell as an hparam value (bool, int, float or str), None where it is empty."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):  # numpy scalars from pandas
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return None
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def hparam_columns(frame) -> list[str]:
    """The columns that become hyperparameters: the axes the records have, devices, status; run_id when the frame
    holds several runs. Columns with no value in any record (an axis no config used) are left out."""
    names = [name for name in (*AXES, *EXTRA_HPARAMS) if name in frame.columns]
    if m.RUN_ID in frame.columns and frame[m.RUN_ID].nunique() > 1:
        names.append(m.RUN_ID)
    return [name for name in names if any(_plain(v) is not None for v in frame[name])]


def _domain(column) -> list:
    """The values a column took, of one type as HParams needs: bools, numbers (floats if any is one), or text."""
    values = {_plain(v) for v in column} - {None}  # not column.map(_plain): pandas turns None back into NaN
    if all(isinstance(v, bool) for v in values):
        return sorted(values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return sorted(float(v) for v in values) if any(isinstance(v, float) for v in values) else sorted(values)
    return sorted(str(v) for v in values)


def _description(name: str, meaning: dict[str, str]) -> str:
    return AXES[name].help if name in AXES else meaning.get(name, "")


def _folder_name(value: Any) -> str:
    """An id as one folder name: itself where it is a name (tfscale.untrusted.NAME), else "id-" and 12 hex digits of
    its hash (a record's ids are untrusted: "../.." or an absolute path must not lead out of the output folder)."""
    text = str(value)
    return text if is_name(text) else "id-" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def trial_name(row, several_runs: bool) -> str:
    """The trial's folder under the experiment's: <config_id>, or <run_id>/<config_id> over several runs."""
    ids = (row[m.RUN_ID], row[m.CONFIG_ID]) if several_runs else (row[m.CONFIG_ID],)
    return "/".join(_folder_name(value) for value in ids)


def write_hparams(frame, out: str | Path) -> int:
    """Write `frame` (load_results + add_scaling) as an HParams experiment under `out`; returns the trial count."""
    tb = _tensorboard()
    hp = tb.hp
    out = Path(out)
    columns = hparam_columns(frame)
    meaning = {name: column.meaning for name, column in m.COLUMNS.items()}
    hparams = {
        name: hp.HParam(name, hp.Discrete(_domain(frame[name])), description=_description(name, meaning))
        for name in columns
    }
    metrics = [hp.Metric(column, description=meaning.get(column, "")) for column in METRICS if column in frame.columns]
    now = time.time()
    _write(tb, out, [hp.hparams_config_pb(hparams=list(hparams.values()), metrics=metrics)], now)
    several = m.RUN_ID in columns
    for _, row in frame.iterrows():
        values = {}
        for name, hparam in hparams.items():
            value = _plain(row[name])
            if value is None:
                continue
            values[hparam] = hparam.domain.dtype(value)
        name = trial_name(row, several)
        summaries = [hp.hparams_pb(values, trial_id=name, start_time_secs=now)]
        for column in METRICS:
            value = _plain(row.get(column))
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                scalar = tb.summary_pb2.Summary.Value(tag=column, simple_value=value)
                summaries.append(tb.summary_pb2.Summary(value=[scalar]))
        _write(tb, out / name, summaries, now)
    return len(frame)


def _write(tb, folder: Path, summaries, wall_time: float) -> None:
    """One event file in `folder` with each summary at step 0."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = tb.Writer(str(folder), filename_suffix=".tfscale")
    try:
        for summary in summaries:
            writer.add_event(tb.event_pb2.Event(summary=summary, step=0, wall_time=wall_time))
    finally:
        writer.close()
