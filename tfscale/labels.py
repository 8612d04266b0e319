"""Display labels, defined once: what plan, progress, the terminal summary, analysis and the report call a model,
a mode (how the devices are used) and a layout (how the devices are spread). Pure; values may come from records or
from pandas rows, where a missing value is None or NaN."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfscale.axes import AXES, DATA_AXES, DATA_FILES, TASK_TEACHER

# An efficiency above 100 % whose 95 % CI reaches 100 %: the config is as fast per device as its baseline, within noise.
TIED_WITH_BASELINE = "tied with the baseline"


def _given(value: Any) -> bool:
    """A value that is there: not None, not NaN, not empty."""
    return value is not None and value == value and value != ""


def model_label(model: str, model_size: Any) -> str:
    """'mlp/small' for zoo models, the user model's name alone."""
    return f"{model}/{model_size}" if _given(model_size) else model


def model_parallel_text(parallelism: str, stages: Any, micro_batches: Any, replicas: Any, tensor_parallel: Any) -> str:
    """A model-parallel layout: 'pipeline 4 stages x 4 micro-batches', 'hybrid 2 data x 2 tensor'."""
    if parallelism == "pipeline":
        return f"pipeline {_count(stages)} stages x {_count(micro_batches)} micro-batches"
    return f"{parallelism} {_count(replicas)} data x {_count(tensor_parallel)} tensor"


def _count(value: Any) -> str:
    """A count as text; '?' where a record lacks it."""
    return str(int(value)) if _given(value) else "?"


def mode_label(
    strategy: Any,
    parallelism: Any = "data",
    stages: Any = None,
    micro_batches: Any = None,
    replicas: Any = None,
    tensor_parallel: Any = None,
) -> str:
    """How the devices are used: the strategy for data parallelism ('mirrored'), else the model-parallel layout."""
    if not _given(parallelism) or parallelism == "data":
        return str(strategy)
    return model_parallel_text(parallelism, stages, micro_batches, replicas, tensor_parallel)


def record_mode(row: Any) -> str:
    """mode_label of a record or a pandas row."""
    return mode_label(
        row.get("strategy"),
        row.get("parallelism"),
        row.get("stages"),
        row.get("micro_batches"),
        row.get("replicas"),
        row.get("tensor_parallel"),
    )


def layout_label(nodes: Any, devices_per_node: Any, strategy: Any = None, num_ps: Any = None, link: Any = None) -> str:
    """How a config spreads its devices, short enough for a table cell: '1 node × 4', '2 nodes × 2', '2 workers +
    1 PS' (ParameterServer), and the shaped link of simulated hosts: '2 nodes × 1, 100mbit'."""
    nodes, per_node = int(nodes), int(devices_per_node)
    text = f"{nodes} node{'s' * (nodes > 1)} × {per_node}"
    if strategy == "parameter_server":
        text = f"{nodes} worker{'s' * (nodes > 1)} + {int(num_ps)} PS"
    return text + (f", {link}" if _given(link) and nodes > 1 else "")


def data_label(row: Mapping[str, Any]) -> str:
    """'' for synthetic data; 'files', or 'files (cache, data_parallel_calls=4)' with the pipeline settings that
    differ from their defaults: what tells two input pipelines of one workload apart in a legend."""
    if row.get("data") != DATA_FILES:
        return ""
    changed = []
    for name in DATA_AXES:
        value = row.get(name)
        if not _given(value) or value == AXES[name].default:
            continue
        changed.append(name if value is True else f"{name}={value}")
    return "files" + (f" ({', '.join(changed)})" if changed else "")


def input_tags(row: Mapping[str, Any]) -> list[str]:
    """What a workload reads and learns, where it is not the default: ['files (cache)', 'teacher task'] (synthetic
    data and random targets: none)."""
    data = data_label(row)
    return [*([data] if data else []), *(["teacher task"] if row.get("task") == TASK_TEACHER else [])]
