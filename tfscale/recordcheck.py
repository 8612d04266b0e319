"""What a JSON object must hold to be a tfscale record readers can compute with (record_problem): the store checks
every line it reads, `tfscale collect` every part it merges. Pure, no pandas.
"""

from __future__ import annotations

from typing import Any

from tfscale import metrics as m
from tfscale.axes import AUTO, AXES, SETTINGS

_NUMBER = (int, float)

# Record columns by what they must hold when present (record_problem), besides the axes and settings, whose types
# tfscale.axes gives. Columns named for a unit (_s, _bytes, _per_s, ...) hold numbers.
_NUMBER_SUFFIXES = ("_s", "_bytes", "_per_s", "_w", "_pct", "_rel", "_fraction", "_ci95_low", "_ci95_high")


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


_STATUSES = (m.STATUS_OK, m.STATUS_FAILED, m.STATUS_TIMEOUT, m.STATUS_SKIPPED)

_OK_FIGURES = (m.STEP_TIME_MEDIAN_S, m.THROUGHPUT_EXAMPLES_PER_S)  # what readers compute with: positive when ok

_TEXT = (
    m.SUITE, m.RUN_ID, m.DEVICE, m.DEVICE_KIND, m.LAUNCHER, m.MEMORY_KIND, m.PEAK_MEMORY_DEVICE, m.REASON, m.HOST,
    m.TIMING, m.COMM_METHOD, m.MEASURE_STOP, m.WARMUP_STOP, m.CI_COVERS, m.TELEMETRY_WINDOW, m.GPU_TELEMETRY_NOTE,
    m.COLLECTIVE_IMPLEMENTATION, m.MODEL_PARALLEL_METHOD, m.LINK_CHECK_METHOD, m.LOG_PATH, m.LOG_TAIL,
    m.TELEMETRY_PATH, m.TRACE_PATH, m.TRACE_ERROR, m.TF_VERSION, m.TFSCALE_VERSION, m.STARTED_AT, m.FINISHED_AT,
    m.DATA_SOURCE, m.DATA_CACHE_PATH, m.INPUT_PIPELINE, m.INPUT_BOUND_NOTE, m.INPUT_WAIT_METHOD, m.TASK,
    m.GRAD_NOISE_METHOD, m.LINK_NCCL_SETTINGS,
)  # fmt: skip

_FLAGS = (m.CI_MET, m.STRAGGLER, m.OVERLAP_OUT_OF_RANGE, m.INPUT_BOUND)

_NUMBERS = (m.FINAL_LOSS, m.OVERLAP_FRACTION_RAW, m.CI_TARGET, m.INPUT_HEADROOM, m.GRAD_NOISE_SCALE)

_NUMBER_LISTS = (
    m.STEP_TIMES_S, m.COMPUTE_TIMES_S, m.REPEAT_MEDIANS_S, m.REPEAT_SAMPLES, m.RANK_STEP_TIME_MEDIAN_S,
    m.RANK_THROUGHPUT_EXAMPLES_PER_S, m.RANK_PEAK_MEMORY_BYTES, m.STRAGGLER_RANKS, m.STAGE_PARAM_BYTES,
    m.INPUT_MEMORY_TIMES_S,
)  # fmt: skip

_COUNTS = (
    m.DEVICES, m.REPLICAS, m.GLOBAL_BATCH_SIZE, m.PARAMS, m.SAMPLES, m.TIMED_STEPS, m.PORT_RETRIES, m.REPEAT,
    m.TELEMETRY_SAMPLES, m.TRACE_STEPS, m.FLOPS_PER_STEP, m.FLOPS_PER_REPLICA_STEP, m.DATA_CACHE_BYTES,
)  # fmt: skip


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a JSON object cannot be a tfscale record readers can compute with (the first wrong field), or None: a
    text config_id, and of the fields present: a known status, text names, each axis and setting of its own type,
    an ok record's figures positive numbers."""
    if not isinstance(record.get(m.CONFIG_ID), str):
        return f"{m.CONFIG_ID} must be text"
    status = record.get(m.STATUS)
    if status is not None and status not in _STATUSES:
        return f"{m.STATUS} must be one of {', '.join(_STATUSES)}"
    for name, axis in {**AXES, **SETTINGS}.items():
        value = record.get(name)
        if value is None or (axis.auto and value == AUTO):
            continue
        kinds = _NUMBER if axis.kind is float else (axis.kind,)
        if not isinstance(value, kinds) or (axis.kind is not bool and isinstance(value, bool)):
            return f"{name} must be {axis.kind.__name__}"
        if axis.choices is not None and value not in axis.choices:  # readers look its facts up by it
            return f"{name} must be one of {', '.join(map(str, axis.choices))}"
    for name, value in record.items():
        if value is None:
            continue
        if name in _TEXT and not isinstance(value, str):
            return f"{name} must be text"
        if name in _NUMBER_LISTS:
            if not isinstance(value, list) or not all(_is_number(v) for v in value):
                return f"{name} must be a list of numbers"
        elif (name.endswith(_NUMBER_SUFFIXES) or name in _NUMBERS) and not _is_number(value):
            return f"{name} must be a number"
        elif name in _COUNTS and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            return f"{name} must be a count"
        elif name in _FLAGS and not isinstance(value, bool):
            return f"{name} must be true or false"
    if status == m.STATUS_OK:  # its figures, numbers by now, must be positive
        for name in _OK_FIGURES:
            if record.get(name) is not None and not record[name] > 0:
                return f"{name} must be a positive number"
    return None
