"""What an axis or run setting is (Axis: type, default, allowed values, role) and the values and limits they share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ZOO_MODELS = ("mlp", "cnn", "transformer")

AUTO = "auto"  # steps, warmup_steps, window_steps: chosen while measuring (tfscale.stats.precision)

# Defaults of the precision settings (why these values: docs/report.md, "How step time is measured, and how long").
# min_window_s auto, per device: the host sync must cost < 1 % of a window. On CPU a sync is a 13 us loss fetch (a
# tf.function call returns after its ops ran): 2 ms windows. On GPUs it also drains the queue the host keeps ahead
# of the device: 50 ms windows keep a drain of up to 0.5 ms under 1 % (assumed, not measured here: no GPU).
MIN_WINDOW_S = {"cpu": 0.002, "gpu": 0.05}

MAX_MEASURE_S = 4.0

MAX_WARMUP_S = 3.0

GRAD_NOISE_EVERY = 8  # steps per probed step: at 4 the transformer/tiny probe still cost +1.2 % (bench_goodput)

MODEL_SIZES = ("tiny", "small", "medium", "large")

DATA_SYNTHETIC, DATA_FILES = "synthetic", "files"

DATA_SOURCES = (DATA_SYNTHETIC, DATA_FILES)

# task: what the targets are. random: drawn at random (gradients without signal: the loss cannot fall); teacher: a
# fixed random teacher function of the inputs labels them, inputs drawn fresh every step (tfscale.worker.teacher)
TASK_RANDOM, TASK_TEACHER = "random", "teacher"

TASKS = (TASK_RANDOM, TASK_TEACHER)

# Upper bounds of the numeric axes: far above any real sweep, low enough that no plan, launch or worker meets a
# number it cannot hold (10^11 nodes made `tfscale launch` build 10^11 tasks; a 300-digit timeout overflowed a float).
MAX_NODES = 4096

MAX_DEVICES_PER_NODE = 1024

MAX_STEPS = 1 << 31  # TF's int32 loop counters

MAX_SECONDS = 30 * 24 * 3600.0  # 30 days: any timeout or measuring budget

MAX_REPEATS = 1000


@dataclass(frozen=True)
class Axis:
    """One setting a config has. `choices` limits strings; `minimum` and `maximum` limit numbers (every numeric axis
    has both; floats are finite)."""

    name: str
    kind: type  # str, int, float or bool
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False  # None is allowed and means "not applicable / TF's default"
    sweepable: bool = True  # may appear in `matrix`; run settings may only be set in defaults / include
    recorded: bool = True  # a record column (every axis; the settings that say how the samples were taken)
    auto: bool = False  # also takes the string AUTO: the worker chooses (tfscale.stats.precision has the rules)
    # Run settings: False where a difference leaves what the timed steps measure as it was (a timeout, a price);
    # compare names every differing setting and refuses to gate across those that are True.
    timing: bool = True
    # False: the default is left out of config_id, so an axis added after ids were published keeps existing ids
    default_in_id: bool = True
    # True: how the work is laid out over devices and hosts (strategy, counts, modes), not what the work is; the
    # other config axes make a workload (the scaling baseline's key: tfscale.analysis.WORKLOAD_KEY)
    layout: bool = False


def _axes(*axes: Axis) -> dict[str, Axis]:
    return {a.name: a for a in axes}
