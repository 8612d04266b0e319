"""The parent's view of this host's CPUs and environment (tfscale.host.envinfo): the pure parts, exact values."""

from tfscale.host.envinfo import cpu_set_text, runtime_variables


def test_cpu_sets_are_written_as_taskset_writes_them():
    assert cpu_set_text({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    assert cpu_set_text([5]) == "5" and cpu_set_text([]) == ""


def test_cpu_peaks_are_measured_once_per_host_and_cached(tmp_path, monkeypatch):
    import json

    from tfscale.host import envinfo

    calls = []

    def fake_worker(mode, timeout_s, request=None):  # the microbenchmark's answer shape (tfscale.worker.peak)
        calls.append(request)
        totals = {d: {str(n): 100e9 * (1 + n / 100) for n in request["counts"]} for d in request["dtypes"]}
        return {"total": totals, "spread": {d: dict.fromkeys(v, 0.01) for d, v in totals.items()}, "method": "mm"}

    monkeypatch.setenv(envinfo.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(envinfo, "call_worker", fake_worker)
    first = envinfo.cpu_peaks([2], ["float32"])
    assert calls == [{"counts": [1, 2], "dtypes": ["float32"]}]  # count 1 always: the host's own peak
    assert first["host"] == {"float32": 102e9} and first["source"].startswith("measured now")
    again = envinfo.cpu_peaks([2, 1], ["float32"])
    assert len(calls) == 1 and again["total"] == first["total"] and again["source"].startswith("cached")
    envinfo.cpu_peaks([4], ["float32"])
    assert calls[-1] == {"counts": [4], "dtypes": ["float32"]}  # only what the cache lacks
    (tmp_path / envinfo.PEAK_CACHE_FILE).write_text("{not json")
    envinfo.cpu_peaks([1], ["float32"])
    assert calls[-1] == {"counts": [1], "dtypes": ["float32"]}  # a damaged cache is measured again
    assert json.loads((tmp_path / envinfo.PEAK_CACHE_FILE).read_text())  # and rewritten whole


def test_runtime_variables_are_the_ones_that_tune_tensorflow_and_its_libraries():
    environ = {
        "TF_NUM_INTRAOP_THREADS": "1",
        "OMP_NUM_THREADS": "2",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "TF_CONFIG": '{"cluster": {}}',
        "TF_VAR_password": "terraform's, not ours",
        "TF_CLI_CONFIG_FILE": "/root/.terraformrc",
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "PATH": "/usr/bin",
        "TFSCALE_CACHE_DIR": "/tmp/c",
    }
    assert runtime_variables(environ) == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "OMP_NUM_THREADS": "2",
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "TF_NUM_INTRAOP_THREADS": "1",
    }


def test_tensorflow_view_is_asked_once_per_unchanged_host_and_says_so(tmp_path, monkeypatch):
    from tfscale.host import envinfo

    answers = [{"version": "2.21.0", "physical_devices": ["/physical_device:CPU:0"]}]
    calls = []

    def fake_worker(mode, timeout_s, request=None):
        calls.append(mode)
        return answers[-1]

    monkeypatch.setenv(envinfo.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(envinfo, "call_worker", fake_worker)
    host = {"host": "h", "packages": {"tensorflow": "2.21.0"}, "runtime_variables": {}, "nvml": {}, "captured_at": "t0"}
    first = envinfo.cached_tensorflow_env(host)
    assert first == {**answers[0], "source": "asked of a worker now"} and len(calls) == 1
    again = envinfo.cached_tensorflow_env({**host, "captured_at": "t1"})
    assert len(calls) == 1 and again["version"] == "2.21.0"
    assert again["source"] == f"cached: asked of a worker at t0 ({tmp_path / envinfo.TENSORFLOW_CACHE_FILE})"
    hidden = {**host, "runtime_variables": {"CUDA_VISIBLE_DEVICES": "-1"}}
    envinfo.cached_tensorflow_env(hidden)
    assert len(calls) == 2  # what hides or tunes devices is part of the key
    envinfo.cached_tensorflow_env({**hidden, "packages": {"tensorflow": "2.21.1"}})
    assert len(calls) == 3
    answers.append({"error": "worker exited 1"})
    failed = {**host, "host": "other"}
    assert envinfo.cached_tensorflow_env(failed)["error"] == "worker exited 1"
    envinfo.cached_tensorflow_env(failed)
    assert len(calls) == 5  # a failed answer is not kept
    assert envinfo.collect_env()["tensorflow"] == answers[-1] and len(calls) == 6  # `tfscale env` always asks
