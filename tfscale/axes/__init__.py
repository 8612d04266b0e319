"""The sweep axes and run settings a suite may set, with their types, allowed values and defaults.

Pure data, no TensorFlow: the suite loader validates against it and the plan fills defaults from it. A later
capability (multi-node strategies, model parallelism, communication options) adds an axis or a choice here.
"""

from __future__ import annotations

from tfscale.axes.config import AXES, DATA_AXES, WORKLOAD_AXES
from tfscale.axes.modes import (
    ADDONS,
    MODES,
    PARALLELISM_AXES,
    PARALLELISMS,
    STRATEGIES,
    STRATEGY_AXES,
    ModeInfo,
    ParallelismInfo,
    StrategyInfo,
    collective_of,
    mode_of,
    replicas_of,
)
from tfscale.axes.settings import ALL_KEYS, SETTINGS
from tfscale.axes.values import (
    AUTO,
    DATA_FILES,
    DATA_SOURCES,
    DATA_SYNTHETIC,
    GRAD_NOISE_EVERY,
    MAX_DEVICES_PER_NODE,
    MAX_MEASURE_S,
    MAX_NODES,
    MAX_REPEATS,
    MAX_SECONDS,
    MAX_STEPS,
    MAX_WARMUP_S,
    MIN_WINDOW_S,
    MODEL_SIZES,
    TASK_RANDOM,
    TASK_TEACHER,
    TASKS,
    ZOO_MODELS,
    Axis,
)

__all__ = [
    "ADDONS",
    "ALL_KEYS",
    "AUTO",
    "AXES",
    "Axis",
    "DATA_AXES",
    "DATA_FILES",
    "DATA_SOURCES",
    "DATA_SYNTHETIC",
    "GRAD_NOISE_EVERY",
    "MAX_DEVICES_PER_NODE",
    "MAX_MEASURE_S",
    "MAX_NODES",
    "MAX_REPEATS",
    "MAX_SECONDS",
    "MAX_STEPS",
    "MAX_WARMUP_S",
    "MIN_WINDOW_S",
    "MODEL_SIZES",
    "MODES",
    "ModeInfo",
    "PARALLELISMS",
    "PARALLELISM_AXES",
    "ParallelismInfo",
    "SETTINGS",
    "STRATEGIES",
    "STRATEGY_AXES",
    "StrategyInfo",
    "TASKS",
    "TASK_RANDOM",
    "TASK_TEACHER",
    "WORKLOAD_AXES",
    "ZOO_MODELS",
    "collective_of",
    "mode_of",
    "replicas_of",
]
