"""`Suite` → ordered list of `RunSpec`: cross product, exclude, include, support checks, stable `config_id`.

Pure and fast: no TensorFlow, no pandas (`tfscale plan` must answer in well under a second).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfscale.axes import (
    ADDONS,
    AUTO,
    AXES,
    DATA_AXES,
    DATA_FILES,
    DATA_SYNTHETIC,
    MIN_WINDOW_S,
    MODES,
    PARALLELISM_AXES,
    PARALLELISMS,
    SETTINGS,
    STRATEGIES,
    STRATEGY_AXES,
    TASK_TEACHER,
    ZOO_MODELS,
    mode_of,
    replicas_of,
)
from tfscale.errors import SuiteError
from tfscale.suite import autorepeats
from tfscale.suite.spec import RunSpec
from tfscale.suite.suitefile import Suite
from tfscale.suite.zoo import pipeline_segments, tensor_split_problem


@dataclass(frozen=True)
class Plan:
    suite: Suite
    specs: tuple[RunSpec, ...]
    duplicates: int  # expanded configs dropped because an earlier one had the same config_id


def config_id(config: dict[str, Any], device: str, user_model: dict[str, Any] | None) -> str:
    """12 hex digits of SHA-256 over the normalised axes (sorted keys), the device and the user model.

    Run settings (steps, timeouts) and the suite name are left out: the same configuration measured longer or
    in another suite keeps its id, so runs can be resumed and compared. Axes that do not apply (None) are left
    out too, so an axis added later for other strategies keeps the ids of existing configs.
    """
    content = {
        k: config[k]
        for k, axis in AXES.items()
        if config.get(k) is not None and (axis.default_in_id or config[k] != axis.default)
    }
    content["device"] = device
    if user_model is not None:
        content["user_model"] = user_model
    blob = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


# Configs of one suite: each is a fresh process of at least ~4 s (a sweep this long runs for days); a 15 KB suite could
# name 10^9 of them, and expanding those ran out of memory.
MAX_CONFIGS = 10_000


def expand(suite: Suite) -> Plan:
    """Expand a validated suite into its configs, in matrix order then include order."""
    product = math.prod(len(values) for values in suite.matrix.values()) if suite.matrix else 0
    named = product + len(suite.include)
    if named > MAX_CONFIGS:
        raise SuiteError(
            f"{suite.path}: matrix and include name {named} configs, over the {MAX_CONFIGS} of one suite; split it"
        )
    base = {k: a.default for k, a in {**AXES, **SETTINGS}.items()} | suite.defaults
    configs = []
    keys = list(suite.matrix)
    if keys:
        for values in itertools.product(*(suite.matrix[k] for k in keys)):
            config = base | dict(zip(keys, values, strict=True))
            if not any(_matches(config, ex) for ex in suite.exclude):
                configs.append(("matrix", config))
    configs += [(f"include[{i}]", base | inc) for i, inc in enumerate(suite.include)]
    if not configs:
        raise SuiteError(f"{suite.path}: exclude: removes every config of the matrix; nothing to run")

    specs, seen = [], {}
    for where, config in configs:
        config = _normalise(config, suite)
        _check_supported(config, suite, where)
        spec = _to_spec(config, suite)
        if spec.config_id in seen:
            _check_same_settings(suite.path, where, seen[spec.config_id], spec)
            continue
        seen[spec.config_id] = (where, spec)
        specs.append(spec)
    return Plan(suite=suite, specs=autorepeats.resolve(specs), duplicates=len(configs) - len(specs))


def _check_same_settings(path, where: str, first: tuple[str, RunSpec], spec: RunSpec) -> None:
    """A config given twice (matrix and include, or two includes) collapses to the first; given with other run
    settings (repeats, steps, timeout_s, ...: not in its config_id), which of them counts would be a silent
    choice, so it is refused."""
    first_where, kept = first
    differ = [f.name for f in dataclasses.fields(spec) if getattr(spec, f.name) != getattr(kept, f.name)]
    if differ:
        settings = ", ".join(f"{k}: {getattr(kept, k)!r} vs {getattr(spec, k)!r}" for k in differ)
        raise SuiteError(
            f"{path}: {where} is config {spec.config_id} of {first_where} again with other settings ({settings}): "
            "exclude it from the matrix, or give it once"
        )


def _matches(config: dict[str, Any], partial: dict[str, Any]) -> bool:
    for key, want in partial.items():
        options = want if isinstance(want, list) else [want]
        if config.get(key) not in options:
            return False
    return True


def _normalise(config: dict[str, Any], suite: Suite) -> dict[str, Any]:
    """Blank axes that do not apply, so that configs differing only there collapse into one; an add-on left
    empty is on wherever the config's mode makes it."""
    config = dict(config)
    if config["data"] == DATA_SYNTHETIC:  # one in-memory batch: no pipeline whose knobs could differ
        for axis in DATA_AXES:
            config[axis] = None
    unsupported = MODES[mode_of(config["strategy"], config["parallelism"])].unsupported
    if config["comm_breakdown"] is None:
        config["comm_breakdown"] = "comm_breakdown" not in unsupported
    if config["grad_noise"] is None:  # where it can be measured and means something
        # Not for one replica: its estimate splits the step in two half batches, a slower step than the baseline's.
        config["grad_noise"] = (
            config["task"] == TASK_TEACHER
            and _noise_problem(config) is None
            and replicas_of(config["strategy"], config["nodes"], config["devices_per_node"]) >= 2
        )
    mode = config["parallelism"]
    for axis in PARALLELISM_AXES - set(PARALLELISMS[mode].own_axes):
        config[axis] = None
    if mode != "data":  # one process, no tf.distribute strategy: the strategy and its options do not apply
        for axis in (*STRATEGY_AXES, "strategy", "network_link"):
            config[axis] = None
        devices = config["devices_per_node"] * config["nodes"]
        if mode == "pipeline" and config["stages"] is None:
            config["stages"] = devices
        if mode in ("tensor", "hybrid") and config["tensor_parallel"] is None:
            config["tensor_parallel"] = devices if mode == "tensor" else min(2, devices)
        if config["model"] not in ZOO_MODELS:
            config["model_size"] = None
        return config
    own = STRATEGIES[config["strategy"]].own_axes
    for axis in STRATEGY_AXES - set(own):
        config[axis] = None
    if config["model"] not in ZOO_MODELS:
        config["model_size"] = None
    if not STRATEGIES[config["strategy"]].cluster or config["nodes"] == 1:  # no link between nodes to shape
        config["network_link"] = None
    elif config["network_link"] is not None:  # one spelling per rate: "1Gbit" and "1gbit" are one config
        config["network_link"] = config["network_link"].strip().lower()
    return config


def _noise_problem(config: dict[str, Any]) -> str | None:
    """Why the gradient noise scale cannot be measured in this config's step, or None."""
    if mode_of(config["strategy"], config["parallelism"]) != "synchronous":
        return "it is read around the all-reduce of synchronous data parallelism"
    if replicas_of(config["strategy"], config["nodes"], config["devices_per_node"]) < 2 and config["batch_size"] % 2:
        return "one replica's estimate compares the gradients of its batch's two halves: give an even batch_size"
    return None


def _check_supported(config: dict[str, Any], suite: Suite, where: str) -> None:
    """Refuse combinations that cannot run, in one line naming the config and the way out."""
    _check_addons(config, suite, where)
    if config["parallelism"] != "data":
        _check_model_parallel_input(config, suite, where)
        _check_model_parallel(config, suite, where)
        return
    name = f"{suite.path}: {where}: {config['model']}/{config['strategy']}"
    _check_strategy_layout(config, suite, name)
    _check_collectives(config, suite, name)
    _check_batching(config, name)


def _check_addons(config: dict[str, Any], suite: Suite, where: str) -> None:
    """grad_noise, profile and comm_breakdown where the config's mode cannot measure them."""
    if config["grad_noise"] and (why := _noise_problem(config)):
        raise SuiteError(f"{suite.path}: {where}: {config['model']}: grad_noise: true is not measured: {why}")
    mode = mode_of(config["strategy"], config["parallelism"])
    for addon in ADDONS:
        why = MODES[mode].unsupported.get(addon)
        if config[addon] and why:
            what = config["strategy"] if config["parallelism"] == "data" else config["parallelism"]
            raise SuiteError(
                f"{suite.path}: {where}: {config['model']}/{what}: {addon}: true is not measured: {why}; "
                f"set {addon}: false"
            )


def _check_model_parallel_input(config: dict[str, Any], suite: Suite, where: str) -> None:
    """Model-parallel modes train on one in-memory batch: no teacher task, no data files."""
    if config["task"] == TASK_TEACHER:
        raise SuiteError(
            f"{suite.path}: {where}: {config['model']}/{config['parallelism']}: task: teacher needs data "
            "parallelism (its inputs come from a tf.data stream); model-parallel modes train on one in-memory "
            "batch: use task: random"
        )
    if config["data"] == DATA_FILES:
        raise SuiteError(
            f"{suite.path}: {where}: {config['model']}/{config['parallelism']}: data: files needs data "
            "parallelism (a tf.distribute strategy distributes the dataset); model-parallel modes train on one "
            "in-memory batch: use data: synthetic"
        )


def _check_strategy_layout(config: dict[str, Any], suite: Suite, name: str) -> None:
    """The nodes, devices and data shards a data-parallel strategy can run on."""
    strategy = STRATEGIES[config["strategy"]]
    if (
        config["data"] == DATA_FILES
        and strategy.name == "multi_worker_mirrored"
        and config["data_shards"] < (workers := config["nodes"])
    ):
        raise SuiteError(
            f"{name}: data_shards={config['data_shards']} < {workers} workers: each worker reads its own files; "
            f"use data_shards >= {workers}"
        )
    if strategy.exactly_one_device and config["devices_per_node"] != 1:
        raise SuiteError(
            f"{name} with devices_per_node={config['devices_per_node']}: {strategy.tf_name} runs on exactly one "
            f"device; add `exclude: [{{strategy: {strategy.name}, devices_per_node: [...]}}]`"
        )
    if config["nodes"] > 1 and not strategy.cluster:
        raise SuiteError(
            f"{name} with nodes={config['nodes']}: {strategy.tf_name} runs on one node; "
            "use multi_worker_mirrored or parameter_server for several nodes"
        )
    if strategy.one_replica_per_cpu_worker and suite.device == "cpu" and config["devices_per_node"] != 1:
        raise SuiteError(
            f"{name} with devices_per_node={config['devices_per_node']}: on device: cpu TensorFlow "
            f"gives each {strategy.tf_name} worker exactly one replica (CPU:0) whatever its logical "
            "devices; use devices_per_node: 1 and more nodes"
        )
    if strategy.name == "parameter_server" and suite.device == "gpu" and config["devices_per_node"] != 1:
        raise SuiteError(
            f"{name} with devices_per_node={config['devices_per_node']}: tfscale's ParameterServer step feeds each "
            "worker one per-worker batch, which every GPU replica of a multi-GPU worker would process whole "
            "(gradients summed devices_per_node times); use devices_per_node: 1 and more nodes"
        )


def _check_collectives(config: dict[str, Any], suite: Suite, name: str) -> None:
    """Cross-device ops, collectives and partitioners that cannot reduce over the config's devices."""
    devices = config["devices_per_node"]
    if config["cross_device_ops"] == "hierarchical_copy" and devices > 1 and devices % 2:
        raise SuiteError(
            f"{name} with devices_per_node={devices}: hierarchical_copy splits the devices into two groups of "
            f"{devices // 2} (TF's group_size = n // 2) and leaves one replica's gradient out with an odd count; "
            "use an even devices_per_node, or cross_device_ops nccl or reduction_to_one_device"
        )
    if suite.device == "cpu" and "nccl" in (config["cross_device_ops"], config["collective"]):
        axis = "cross_device_ops" if config["cross_device_ops"] == "nccl" else "collective"
        raise SuiteError(
            f"{name}: {axis}=nccl has no CPU kernel (device: cpu); "
            + ("use hierarchical_copy or reduction_to_one_device" if axis == "cross_device_ops" else "use ring or auto")
        )
    if config["partitioner"] == "fixed_shards" and config["num_ps"] == 1:
        raise SuiteError(f"{name}: partitioner=fixed_shards shards over num_ps servers; with num_ps=1 use none")


def _check_batching(config: dict[str, Any], name: str) -> None:
    """Fixed steps in whole windows; a strong-scaling global batch that divides over the replicas."""
    fixed = AUTO not in (config["steps"], config["window_steps"])
    if fixed and config["steps"] % config["window_steps"]:
        raise SuiteError(f"{name}: steps={config['steps']} is not a multiple of window_steps={config['window_steps']}")
    replicas = replicas_of(config["strategy"], config["nodes"], config["devices_per_node"])
    if config["batch_policy"] == "strong" and config["batch_size"] % replicas:
        raise SuiteError(
            f"{name}: batch_size={config['batch_size']} (strong scaling: global) does not divide "
            f"over {replicas} replicas"
        )


def _check_model_parallel(config: dict[str, Any], suite: Suite, where: str) -> None:
    mode, model, size = config["parallelism"], config["model"], config["model_size"]
    name = f"{suite.path}: {where}: {model}/{mode}"
    supported = PARALLELISMS[mode].models
    if supported is not None and model not in supported:
        raise SuiteError(
            f"{name}: parallelism={mode} supports the zoo models {', '.join(supported)} only "
            f"(it needs to know where to cut or shard the model); use parallelism=data for {model}"
        )
    if config["nodes"] != 1:
        raise SuiteError(
            f"{name} with nodes={config['nodes']}: model-parallel modes run in one process on one node; use nodes: 1"
        )
    if config["precision"] != "float32" or config["jit"]:
        raise SuiteError(f"{name}: model-parallel modes run in float32 without jit; set precision: float32, jit: false")
    devices = config["devices_per_node"]
    batch = config["batch_size"] if config["batch_policy"] == "strong" else None
    if mode == "pipeline":
        stages, micro = config["stages"], config["micro_batches"]
        if stages > devices:
            raise SuiteError(f"{name}: stages={stages} needs as many devices; devices_per_node={devices}")
        if stages > pipeline_segments(model, size):
            raise SuiteError(
                f"{name}: stages={stages} but {model}/{size} has only {pipeline_segments(model, size)} "
                "layers to cut between; use fewer stages or a larger model_size"
            )
        global_batch = batch or config["batch_size"]
        if global_batch % micro:
            raise SuiteError(f"{name}: global batch {global_batch} does not divide into micro_batches={micro}")
        return
    tp = config["tensor_parallel"]
    if devices % tp or (mode == "tensor" and tp != devices):
        need = "equal" if mode == "tensor" else "divide"
        raise SuiteError(f"{name}: tensor_parallel={tp} must {need} devices_per_node={devices}")
    problem = tensor_split_problem(model, size, tp)
    if problem:
        raise SuiteError(f"{name}: cannot shard {model}/{size} over tensor_parallel={tp}: {problem}")
    if config["optimizer"] != "sgd":
        raise SuiteError(
            f"{name}: tensor and hybrid parallelism update DTensor weights with tfscale's own SGD "
            "(Keras optimizers make non-DTensor slots); use optimizer: sgd"
        )
    replicas = devices // tp
    if batch is not None and batch % replicas:
        raise SuiteError(
            f"{name}: batch_size={batch} (strong scaling: global) does not divide over {replicas} data-parallel copies"
        )


def _to_spec(config: dict[str, Any], suite: Suite) -> RunSpec:
    user = suite.models.get(config["model"])
    user_model = user.model_dump() if user is not None else None
    return RunSpec(
        suite=suite.name,
        device=suite.device,
        config_id=config_id(config, suite.device, user_model),
        user_model=user_model,
        suite_dir=str(Path(suite.path).resolve().parent) if suite.path else "",
        **{k: config[k] for k in AXES},
        **{k: _setting(k, v, suite.device) for k, v in config.items() if k in SETTINGS},
    )


def _setting(name: str, value: Any, device: str) -> Any:
    """A run setting's value in the spec: floats as floats, min_window_s auto resolved for the device."""
    if name == "min_window_s" and value == AUTO:
        return MIN_WINDOW_S[device]
    return float(value) if SETTINGS[name].kind is float and value not in (AUTO, None) else value
