"""Worker-side pieces that need TensorFlow."""

from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.workers, pytest.mark.tf]


def test_strategy_registries_agree():
    from tfscale.axes import STRATEGIES
    from tfscale.worker.strategies import BUILDERS

    assert set(BUILDERS) == set(STRATEGIES)


def test_mode_registries_agree():
    from tfscale.axes import MODES
    from tfscale.worker.modes import MODES as TRAINERS

    assert set(TRAINERS) == set(MODES)


def test_env_command_reports_tensorflow_and_host(runner, tmp_path):
    import json

    from tfscale.cli import cli

    out = tmp_path / "env.json"
    result = runner.invoke(cli, ["env", "-o", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    summary, _, text = result.output.partition("\n\n")
    assert json.loads(text) == document
    # the paragraph a person reads first, from the same document
    assert summary.startswith(f"host {document['host']}: ") and "TensorFlow 2.21" in summary
    assert "sees 0 GPU(s)" in summary or Path("/dev/nvidiactl").exists()
    assert document["tensorflow"]["version"].startswith("2.21")
    assert "CPU" in " ".join(document["tensorflow"]["physical_devices"])
    assert document["packages"]["tensorflow"].startswith("2.21")
    piped = runner.invoke(cli, ["env", "--json"])  # the JSON alone, for a pipe
    assert piped.exit_code == 0 and json.loads(piped.output)["host"] == document["host"]
    # no GPU driver on CI machines: the NVML part must say why instead of failing
    if Path("/dev/nvidiactl").exists():
        assert document["nvml"]["available"] and document["nvml"]["gpus"]
    else:
        assert document["nvml"] == {"available": False, "reason": document["nvml"]["reason"]}
        assert document["nvml"]["reason"].startswith("NVML not available on this host: ")


GPU_SUITE = """
name: g
device: gpu
matrix:
  model: [mlp]
  strategy: [mirrored]
  devices_per_node: [1, 2]
"""


def test_a_gpu_suite_is_refused_before_any_config_starts_on_a_host_without_gpus(runner, tmp_path, monkeypatch):
    from tfscale.cli import cli

    if Path("/dev/nvidiactl").exists():
        pytest.skip("this host has a GPU driver")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    suite = tmp_path / "g.yaml"
    suite.write_text(GPU_SUITE)
    args = ["--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")]
    result = runner.invoke(cli, ["run", str(suite), *args])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        "tfscale: error: refused before the sweep: device: gpu, but this host has no GPU to give out (NVML finds "
        "none, or CUDA_VISIBLE_DEVICES hides them); 2 config(s) need GPUs"
    )
    assert "sees 0 GPU(s)" in result.output  # the summary paragraph came first
    assert not (tmp_path / "results").exists()  # no config ran, nothing was stored
    plan = runner.invoke(cli, ["plan", str(suite)])
    assert plan.exit_code == 0 and "note: `tfscale run` here would refuse this suite: device: gpu" in plan.output


@pytest.mark.parametrize("mode", ["tensor", "pipeline"])
def test_model_parallel_gpu_start_builds_on_the_host_and_starts_dtensor_before_the_runtime(mode):
    # Fakes for the device set-up, DTensor's start and the model builder record the calls (no GPU here): DTensor's
    # all-reduce runs on NCCL only when initialize_accelerator_system("GPU") ran before the runtime started, and a
    # model built with no device scope was a whole unsharded copy on GPU:0.
    import json
    import subprocess
    import sys

    script = Path(__file__).parent / "support" / "model_parallel_calls.py"
    done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    calls = json.loads(done.stdout.splitlines()[-1])["calls"]
    start = ["initialize_accelerator_system(GPU)"] if mode == "tensor" else []
    assert calls == [
        "configure_devices(gpu, 2)",
        *start,
        "device_names",
        "build_workload under /job:localhost/replica:0/task:0/device:CPU:0",
    ]


def test_a_task_server_offers_only_its_own_gpus():
    # A ParameterServer worker's gRPC server built its devices from its own ConfigProto, every GPU the process saw:
    # the coordinator counted them all as that worker's replicas. device_count caps them (none for a PS).
    from tfscale.worker.cluster import SERVER_INTER_OP_THREADS, server_config

    assert dict(server_config("gpu", 2).device_count) == {"GPU": 2}
    assert dict(server_config("gpu", 0).device_count) == {"GPU": 0}
    assert dict(server_config("cpu", 4).device_count) == {}  # logical CPU devices come from tf.config
    assert server_config("cpu", 4).inter_op_parallelism_threads == SERVER_INTER_OP_THREADS


def test_collective_implementation_is_what_tf_runs_not_what_was_asked(monkeypatch):
    # TF runs NCCL only for an NCCL hint on GPU groups in a CUDA build (collective_param_resolver_local.cc:
    # AssignCollectiveType); asked NCCL on CPUs it ran ring while the record said NCCL.
    from types import SimpleNamespace

    import tensorflow as tf

    from tfscale.worker.strategies import collective_implementation

    def strategy(asked, device_type):
        options = SimpleNamespace(implementation=SimpleNamespace(value=asked))
        return SimpleNamespace(extended=SimpleNamespace(_communication_options=options, _local_device_type=device_type))

    monkeypatch.setattr(tf.sysconfig, "get_build_info", lambda: {"is_cuda_build": True})
    assert collective_implementation(strategy("NCCL", "GPU")) == "NCCL"
    assert collective_implementation(strategy("NCCL", "CPU")) == "RING"
    assert collective_implementation(strategy("RING", "GPU")) == "RING"
    assert collective_implementation(SimpleNamespace(extended=SimpleNamespace())) is None
    monkeypatch.setattr(tf.sysconfig, "get_build_info", lambda: {"is_cuda_build": False})
    assert collective_implementation(strategy("NCCL", "GPU")) == "RING"


def test_an_op_with_gpu_kernels_counts_once_in_the_op_breakdown():
    # A GPU op has a host event (its launch) and kernel events carrying its name in the "tf_op" stat; both were
    # counted. A host-only op (the input) still counts by its host event.
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    from tfscale.worker.trace import op_events

    space = xplane_pb2.XSpace()
    host = space.planes.add(name="/host:CPU")
    host.event_metadata[1].name = "dense/MatMul:MatMul"
    host.event_metadata[2].name = "iterator/GetNext:IteratorGetNext"
    line = host.lines.add(name="tf_Compute", timestamp_ns=0)
    line.events.add(metadata_id=1, offset_ps=0, duration_ps=10**6)
    line.events.add(metadata_id=2, offset_ps=2 * 10**6, duration_ps=10**6)
    gpu = space.planes.add(name="/device:GPU:0")
    gpu.stat_metadata[7].name = "tf_op"
    gpu.event_metadata[1].name = "volta_sgemm_128x64_nn"
    kernels = gpu.lines.add(name="Stream #14(Compute)", timestamp_ns=0)
    kernel = kernels.events.add(metadata_id=1, offset_ps=5 * 10**5, duration_ps=4 * 10**6)
    kernel.stats.add(metadata_id=7, str_value="dense/MatMul:MatMul")
    found = sorted((e.name, e.op_type, round((e.end - e.start) * 1e6)) for e in op_events(space))
    assert found == [("dense/MatMul", "MatMul", 4), ("iterator/GetNext", "IteratorGetNext", 1)]  # us


def test_a_worker_imports_tensorflow_without_pandas_and_pandas_works_after():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from tfscale.worker.main import import_tensorflow\n"
        "import_tensorflow()\n"
        "from keras.src.trainers.data_adapters import array_slicing\n"
        "print(array_slicing.pandas is None, 'pandas' in sys.modules)\n"
        "import pandas\n"
        "print(pandas.DataFrame({'a': [1]}).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["True False", "(1, 1)"]
