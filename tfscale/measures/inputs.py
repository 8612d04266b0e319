"""What the input pipeline costs a training step, and whether the step is input-bound. Pure: no TensorFlow.

The worker times, beside the training step fed by the pipeline, the same step fed by one batch the pipeline made
and held in memory (`tf.data` `take(1).cache().repeat()`: the same tensors, no reading, parsing or decoding). The
input wait per step is the difference of the two medians, with a bootstrap CI (tfscale.stats.uncertainty): cheap
(a few windows more per config), always on for `data: files`, and it counts only the wait the pipeline's own
prefetching did not hide. With `profile: true`, `op_time_input_s` is the trace's own figure of the same wait (the
iterator ops of the traced steps).

A step is input-bound when it waits for input more than INPUT_BOUND_SHARE of its median AND the CI of the wait
excludes 0 (a wait inside the noise decides nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from tfscale import metrics as m
from tfscale.formatting import interval, ms, percent
from tfscale.stats.uncertainty import difference_of_medians

INPUT_BOUND_SHARE = 0.10  # a step waiting on input for more than this share of its median is input-bound

WAIT_METHOD = (
    "median training step fed by the pipeline - median of the same step fed by one of the pipeline's batches held "
    "in memory ({n} windows of {w} step(s) after it, untimed warm-up first); 95 % CI by bootstrap of both "
    "windows; input_bound: wait > {share:.0%} of the step and its CI above 0"
)


@dataclass(frozen=True)
class InputWait:
    """The input wait of one config: seconds per step (median difference) and its 95 % CI, None where not known."""

    wait_s: float
    low_s: float | None
    high_s: float | None
    step_s: float

    @classmethod
    def of(cls, step_samples: list[float], memory_samples: list[float]) -> InputWait:
        interval = difference_of_medians(step_samples, memory_samples)
        return cls(
            median(step_samples) - median(memory_samples),
            None if interval is None else interval.low,
            None if interval is None else interval.high,
            median(step_samples),
        )

    @property
    def fraction(self) -> float:
        return self.wait_s / self.step_s

    @property
    def bound(self) -> bool:
        """More than INPUT_BOUND_SHARE of the step, and not inside the noise."""
        return self.fraction > INPUT_BOUND_SHARE and self.low_s is not None and self.low_s > 0

    def note(self) -> str:
        """The figures that decided `bound`, one sentence."""
        ci = "" if self.low_s is None else f" {interval(ms(self.low_s), ms(self.high_s), '95 % CI ')}"
        verdict = "input-bound" if self.bound else "not input-bound"
        why = ""
        if not self.bound:
            if self.high_s is not None and self.high_s < 0:
                why = ": not measurable, the step fed from memory ran slower"
            elif self.low_s is None or self.low_s <= 0:
                why = ": the wait is within noise"
            else:
                why = f": at most {percent(INPUT_BOUND_SHARE)} of the step"
        return (
            f"{verdict}{why}: waits {ms(self.wait_s)}{ci} of a {ms(self.step_s)} step "
            f"({percent(self.fraction)}; threshold {percent(INPUT_BOUND_SHARE)})"
        )


def input_columns(
    step_samples: list[float],
    memory_samples: list[float],
    input_examples_per_s: float | None,
    throughput: float,
    window: int,
) -> dict[str, Any]:
    """The record's input columns from the step's windows, the in-memory step's windows and the pipeline's
    input-only throughput (examples/s over all of the config's pipelines)."""
    wait = InputWait.of(step_samples, memory_samples)
    return {
        m.INPUT_MEMORY_TIMES_S: list(memory_samples),
        m.INPUT_WAIT_TIME_S: wait.wait_s,
        m.INPUT_WAIT_TIME_CI95_LOW_S: wait.low_s,
        m.INPUT_WAIT_TIME_CI95_HIGH_S: wait.high_s,
        m.INPUT_BOUND: wait.bound,
        m.INPUT_BOUND_NOTE: wait.note(),
        m.INPUT_WAIT_METHOD: WAIT_METHOD.format(n=len(memory_samples), w=window, share=INPUT_BOUND_SHARE),
        m.INPUT_THROUGHPUT_EXAMPLES_PER_S: input_examples_per_s,
        m.INPUT_HEADROOM: None if not input_examples_per_s else input_examples_per_s / throughput,
    }
