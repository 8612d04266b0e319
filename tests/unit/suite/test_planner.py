import pytest

from tfscale.errors import SuiteError
from tfscale.suite.planner import config_id, expand
from tfscale.suite.planview import plan_rows
from tfscale.suite.suitefile import parse_suite


def plan_of(text):
    return expand(parse_suite(text, "s.yaml"))


def test_cross_product_in_matrix_order_with_defaults():
    plan = plan_of("""
name: p
defaults: {batch_size: 8, steps: 5}
matrix:
  model: [mlp, cnn]
  devices_per_node: [1, 2]
  strategy: [mirrored]
""")
    assert [(s.model, s.devices_per_node) for s in plan.specs] == [("mlp", 1), ("mlp", 2), ("cnn", 1), ("cnn", 2)]
    spec = plan.specs[1]
    assert (spec.batch_size, spec.steps, spec.warmup_steps, spec.precision, spec.model_size) == (
        8,
        5,
        "auto",
        "float32",
        "small",
    )
    assert (spec.replicas, spec.global_batch_size, spec.devices) == (2, 16, 2)


def test_exclude_with_list_and_include():
    plan = plan_of("""
name: p
matrix:
  strategy: [one_device, mirrored]
  devices_per_node: [1, 2, 4]
exclude:
  - {strategy: one_device, devices_per_node: [2, 4]}
include:
  - {strategy: central_storage, devices_per_node: 4, batch_size: 64, batch_policy: strong}
""")
    assert [(s.strategy, s.devices_per_node) for s in plan.specs] == [
        ("one_device", 1),
        ("mirrored", 1),
        ("mirrored", 2),
        ("mirrored", 4),
        ("central_storage", 4),
    ]
    last = plan.specs[-1]
    assert (last.global_batch_size, last.per_replica_batch_size) == (64, 16)


def test_axes_that_do_not_apply_collapse():
    plan = plan_of("""
name: p
matrix:
  strategy: [one_device, mirrored]
  cross_device_ops: [hierarchical_copy, reduction_to_one_device]
""")
    assert [(s.strategy, s.cross_device_ops) for s in plan.specs] == [
        ("one_device", None),
        ("mirrored", "hierarchical_copy"),
        ("mirrored", "reduction_to_one_device"),
    ]
    assert plan.duplicates == 1


def test_user_model_has_no_size_and_its_definition_in_the_id():
    text = "name: p\nmatrix: {model: [mine]}\nmodels: {mine: {entry: 'a.b:c', args: {n: %d}}}\n"
    one, two = plan_of(text % 1).specs[0], plan_of(text % 2).specs[0]
    assert one.model_size is None
    assert one.user_model == {"entry": "a.b:c", "args": {"n": 1}}
    assert one.config_id != two.config_id


def test_config_id_is_stable_and_ignores_run_settings():
    spec = plan_of("name: p\nmatrix: {model: [mlp]}\n").specs[0]
    # Pinned: changing how ids are computed breaks resume and comparison of older runs.
    assert spec.config_id == "557fa77f64a7"
    longer = plan_of("name: other\ndefaults: {steps: 99, timeout_s: 5}\nmatrix: {model: [mlp]}\n").specs[0]
    assert longer.config_id == spec.config_id
    assert plan_of("name: p\ndevice: gpu\nmatrix: {model: [mlp]}\n").specs[0].config_id != spec.config_id


def test_config_id_hashes_sorted_content():
    config = {
        "model": "mlp",
        "model_size": "small",
        "strategy": "one_device",
        "cross_device_ops": None,
        "collective": None,
        "bytes_per_pack": None,
        "num_ps": None,
        "partitioner": None,
        "nodes": 1,
        "devices_per_node": 1,
        "parallelism": "data",
        "batch_size": 32,
        "batch_policy": "weak",
        "precision": "float32",
        "jit": False,
        "optimizer": "sgd",
    }
    assert config_id(config, "cpu", None) == config_id(dict(reversed(list(config.items()))), "cpu", None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "matrix: {strategy: [one_device], devices_per_node: [2]}",
            "s.yaml: matrix: mlp/one_device with devices_per_node=2: OneDeviceStrategy runs on exactly one device",
        ),
        (
            "matrix: {strategy: [mirrored], cross_device_ops: [nccl]}",
            "s.yaml: matrix: mlp/mirrored: cross_device_ops=nccl has no CPU kernel (device: cpu)",
        ),
        (
            "matrix: {strategy: [mirrored], nodes: [2]}",
            "s.yaml: matrix: mlp/mirrored with nodes=2: MirroredStrategy runs on one node",
        ),
        (
            "defaults: {batch_policy: strong, batch_size: 10}\nmatrix: {strategy: [mirrored], devices_per_node: [4]}",
            "s.yaml: matrix: mlp/mirrored: batch_size=10 (strong scaling: global) does not divide over 4 replicas",
        ),
        (
            "defaults: {steps: 25, window_steps: 10}\nmatrix: {model: [mlp]}",
            "s.yaml: matrix: mlp/one_device: steps=25 is not a multiple of window_steps=10",
        ),
        ("matrix: {strategy: [mirrored]}\nexclude: [{strategy: mirrored}]", "s.yaml: exclude: removes every config"),
        (
            "matrix: {model: [mlp]}\ninclude: [{strategy: one_device, devices_per_node: 4}]",
            "s.yaml: include[0]: mlp/one_device with devices_per_node=4",
        ),
        (
            "matrix: {strategy: [mirrored], cross_device_ops: [hierarchical_copy], devices_per_node: [3]}",
            "s.yaml: matrix: mlp/mirrored with devices_per_node=3: hierarchical_copy splits the devices into two "
            "groups of 1 (TF's group_size = n // 2) and leaves one replica's gradient out with an odd count",
        ),
        (
            "device: gpu\nmatrix: {strategy: [parameter_server], nodes: [2], devices_per_node: [2]}",
            "s.yaml: matrix: mlp/parameter_server with devices_per_node=2: tfscale's ParameterServer step feeds "
            "each worker one per-worker batch",
        ),
    ],
)
def test_impossible_combinations_are_refused(text, message):
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\n" + text + "\n")
    assert str(info.value).startswith(message)


def test_cluster_strategies_keep_only_their_own_axes():
    plan = plan_of("""
name: p
defaults: {num_ps: 2, partitioner: fixed_shards, collective: ring, cross_device_ops: hierarchical_copy}
matrix:
  strategy: [mirrored, multi_worker_mirrored, parameter_server]
  nodes: [2]
exclude: [{strategy: mirrored}]
include: [{strategy: mirrored}]
""")
    got = [
        (s.strategy, s.cross_device_ops, s.collective, s.bytes_per_pack, s.num_ps, s.partitioner, s.replicas)
        for s in plan.specs
    ]
    assert got == [
        ("multi_worker_mirrored", None, "ring", 0, None, None, 2),
        ("parameter_server", None, None, None, 2, "fixed_shards", 2),
        ("mirrored", "hierarchical_copy", None, None, None, None, 1),
    ]
    assert plan.specs[1].cluster and not plan.specs[2].cluster


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "matrix: {strategy: [multi_worker_mirrored], devices_per_node: [2]}",
            "s.yaml: matrix: mlp/multi_worker_mirrored with devices_per_node=2: on device: cpu TensorFlow gives each "
            "MultiWorkerMirroredStrategy worker exactly one replica (CPU:0)",
        ),
        (
            "matrix: {strategy: [parameter_server], devices_per_node: [4]}",
            "s.yaml: matrix: mlp/parameter_server with devices_per_node=4: on device: cpu",
        ),
        (
            "matrix: {strategy: [multi_worker_mirrored], collective: [nccl]}",
            "s.yaml: matrix: mlp/multi_worker_mirrored: collective=nccl has no CPU kernel (device: cpu); use ring",
        ),
        (
            "matrix: {strategy: [parameter_server], partitioner: [fixed_shards]}",
            "s.yaml: matrix: mlp/parameter_server: partitioner=fixed_shards shards over num_ps servers",
        ),
    ],
)
def test_cluster_combinations_refused_on_cpu(text, message):
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\n" + text + "\n")
    assert str(info.value).startswith(message)


def test_multi_worker_mirrored_on_gpus_uses_every_device():
    spec = plan_of(
        "name: p\ndevice: gpu\nmatrix: {strategy: [multi_worker_mirrored], nodes: [2], devices_per_node: [4]}\n"
    ).specs[0]
    assert (spec.replicas, spec.global_batch_size) == (8, 256)


def test_collective_auto_asks_for_nccl_on_gpus_and_ring_on_cpus():
    from tfscale.axes import collective_of

    assert (collective_of("gpu", "auto"), collective_of("gpu", None), collective_of("cpu", "auto")) == (
        "NCCL",
        "NCCL",
        "RING",
    )
    assert (collective_of("gpu", "ring"), collective_of("gpu", "nccl")) == ("RING", "NCCL")


def test_nccl_is_allowed_on_gpu():
    plan = plan_of("name: p\ndevice: gpu\nmatrix: {strategy: [mirrored], cross_device_ops: [nccl]}\n")
    assert plan.specs[0].cross_device_ops == "nccl"


def test_plan_rows():
    rows = plan_rows(plan_of("name: p\nmatrix: {strategy: [mirrored], devices_per_node: [2]}\n"))
    assert rows == [
        {
            "config_id": rows[0]["config_id"],
            "model": "mlp/small",
            "strategy": "mirrored",
            "nodes": 1,
            "dev/node": 2,
            "replicas": 2,
            "link": "",
            "batch": "32 weak",
            "global": 64,
            "precision": "float32",
            "jit": "off",
            "opt": "sgd",
            "data": "synthetic",
            "steps": "auto+auto x4",  # repeats: auto (the default) runs a lone config in 4 processes
            "timeout_s": "600",
        }
    ]


def test_add_ons_default_to_where_the_mode_measures_them():
    suite = parse_suite(
        "name: a\ndefaults: {devices_per_node: 2, strategy: mirrored}\n"
        "matrix: {parallelism: [data, pipeline, tensor]}\n"
        "include: [{strategy: parameter_server, nodes: 2, devices_per_node: 1}]\n",
        "a.yaml",
    )
    specs = expand(suite).specs
    assert [(s.parallelism, s.strategy, s.comm_breakdown, s.profile) for s in specs] == [
        ("data", "mirrored", True, False),
        ("pipeline", None, False, False),
        ("tensor", None, False, False),
        ("data", "parameter_server", True, False),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "defaults: {profile: true}\nmatrix: {strategy: [parameter_server], nodes: [2]}",
            "a.yaml: matrix: mlp/parameter_server: profile: true is not measured: parameter_server steps run on the "
            "workers and the profiler traces only the chief's coordinator; use a synchronous strategy to trace the "
            "step; set profile: false",
        ),
        (
            "defaults: {comm_breakdown: true, devices_per_node: 2}\nmatrix: {parallelism: [pipeline]}",
            "a.yaml: matrix: mlp/pipeline: comm_breakdown: true is not measured: a pipeline has no gradient "
            "all-reduce to time apart",
        ),
        (
            "defaults: {devices_per_node: 1}\nmatrix: {model: [mlp]}\ninclude: [{parallelism: hybrid, "
            "devices_per_node: 4, comm_breakdown: true}]",
            "a.yaml: include[0]: mlp/hybrid: comm_breakdown: true is not measured: the collectives DTensor inserts",
        ),
    ],
)
def test_an_add_on_a_mode_cannot_make_is_refused_not_ignored(text, message):
    with pytest.raises(SuiteError) as error:
        expand(parse_suite("name: a\n" + text + "\n", "a.yaml"))
    assert str(error.value).startswith(message)


def test_runspec_fields_are_exactly_the_axes_and_settings():
    import dataclasses

    from tfscale.axes import AXES, SETTINGS
    from tfscale.suite.spec import SPEC_FIELDS, RunSpec

    identity = {"suite", "device", "config_id", "user_model", "suite_dir", "extra"}
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    assert fields - identity == set(AXES) | set(SETTINGS)
    assert fields & identity == identity
    # what a record takes from its spec: derived, never listed by hand
    recorded = (
        "warmup_steps", "window_steps", "min_window_s", "max_measure_s", "max_warmup_s", "repeats", "seed",
        "price_per_device_hour",
    )  # fmt: skip
    assert ("config_id", "suite", "device", *AXES, *recorded) == SPEC_FIELDS


def test_the_plan_shows_how_many_processes_a_config_runs_in():
    plan = expand(parse_suite("name: s\ninclude:\n  - {model: mlp, repeats: 3}\n  - {model: cnn}\n", "s"))
    assert [row["steps"] for row in plan_rows(plan)] == ["auto+auto x3", "auto+auto x2"]  # cnn: auto's probe


def test_the_data_axis_keeps_existing_ids_and_blanks_the_pipeline_settings_of_synthetic_data():
    base = "name: p\ninclude: [{model: mlp, strategy: mirrored, devices_per_node: 2%s}]\n"
    [before] = plan_of(base % "").specs
    assert before.config_id == "e0debba25ed7"  # the id tfscale 0.4.0 gave it before the data axis existed
    [synthetic] = plan_of(base % ", data: synthetic, cache: true, shuffle_buffer: 5").specs
    assert synthetic.config_id == before.config_id
    assert (synthetic.data, synthetic.cache, synthetic.shuffle_buffer, synthetic.data_examples) == (
        "synthetic",
        None,
        None,
        None,
    )
    [files] = plan_of(base % ", data: files").specs
    assert files.config_id != before.config_id
    assert (files.data_examples, files.data_shards, files.data_parallel_calls, files.prefetch, files.cache) == (
        4096,
        8,
        "auto",
        "auto",
        False,
    )


def test_files_are_refused_where_they_cannot_be_read():
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\ninclude: [{model: mlp, parallelism: pipeline, devices_per_node: 2, data: files}]\n")
    assert "data: files needs data parallelism" in str(info.value)
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\ninclude: [{strategy: multi_worker_mirrored, nodes: 4, data: files, data_shards: 2}]\n")
    assert "data_shards=2 < 4 workers" in str(info.value)


def test_a_suite_naming_too_many_configs_is_refused_before_expanding():
    import itertools

    from tfscale.suite.planner import MAX_CONFIGS

    suite = parse_suite(
        "name: big\nmatrix:\n"
        + "".join(f"  {axis}: {list(range(1, 11))}\n" for axis in ("batch_size", "micro_batches", "data_shards"))
        + "  devices_per_node: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n",
        "big.yaml",
    )

    def expanding(*axes):  # refused before the product is even begun (10^9 configs ran out of memory)
        raise AssertionError("the matrix was expanded")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(itertools, "product", expanding)
        with pytest.raises(
            SuiteError, match=f"^big.yaml: matrix and include name 11000 configs, over the {MAX_CONFIGS}"
        ):
            expand(suite)


def test_a_plan_without_repeats_notes_that_no_ci_will_cover_the_spread_between_processes():
    from tfscale.suite.planview import SPREAD_NOTE, spread_note

    once = "name: s\ndefaults: {repeats: 1}\nmatrix: {model: [mlp], strategy: [one_device, mirrored]}\n"
    assert spread_note(plan_of(once)) == SPREAD_NOTE
    twice = once + "include:\n  - {model: mlp, strategy: mirrored, devices_per_node: 2, repeats: 2}\n"
    assert spread_note(plan_of(twice)) is None


def test_a_config_given_again_with_other_settings_is_refused():
    text = """
name: p
matrix: {model: [mlp], strategy: [one_device, mirrored]}
include:
  - {model: mlp, strategy: mirrored}
  - {model: mlp, strategy: one_device, repeats: 5}
"""
    with pytest.raises(SuiteError) as error:
        plan_of(text)
    one_device = plan_of(text.split("  - {model: mlp, strategy: one_device")[0]).specs[0].config_id
    assert str(error.value) == (
        f"s.yaml: include[1] is config {one_device} of matrix again with other settings (repeats: 'auto' vs 5): "
        "exclude it from the matrix, or give it once"
    )
    assert plan_of(text.split("  - {model: mlp, strategy: one_device")[0]).duplicates == 1  # the same: collapsed
