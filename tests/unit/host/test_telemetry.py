import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfscale.contract import PHASE_TIMED, PHASE_TIMING, in_timed_windows
from tfscale.host.telemetry import Nvml, Sampler, pcie_every, selected_gpus, summarise


def host(t, phase, cpu, sent, recv, rss=100):
    return {
        "t_s": t,
        "phase": phase,
        "host_cpu_percent": cpu,
        "workers_rss_bytes": rss,
        "net_bytes_sent": sent,
        "net_bytes_recv": recv,
    }


def test_summary_uses_the_timed_windows():
    rows = [
        host(0.1, "model built", 10.0, 0, 0),
        host(0.2, "window 1/3", 50.0, 100, 100),
        host(0.3, "window 2/3", 70.0, 300, 200),
        host(0.4, "window 3/3", 90.0, 600, 400),
    ]
    summary = summarise(rows, "NVML not available on this host: x")
    assert summary["host_cpu_util_mean_pct"] == pytest.approx(70.0)
    assert summary["net_bytes_per_s"] == pytest.approx((1000 - 200) / 0.2)
    assert summary["telemetry_samples"] == 3 and summary["telemetry_window"] == "timed windows"
    assert (summary["gpu_util_mean_pct"], summary["gpu_mem_peak_bytes"], summary["gpu_power_mean_w"]) == (None,) * 3
    assert summary["gpu_telemetry_note"] == "NVML not available on this host: x"


def test_timed_samples_run_from_the_timing_phase_to_the_end_of_the_windows():
    # phases as a trainer reports them: "window k" only after window k, then the breakdown after the loop
    phases = ["warm-up done", PHASE_TIMING, "window 1", "window 2/2", PHASE_TIMED, "communication timed"]
    assert [in_timed_windows(p) for p in phases] == [False, True, True, True, False, False]
    rows = [host(0.1 * (i + 1), phase, 10.0 * (i + 1), 0, 0) for i, phase in enumerate(phases)]
    summary = summarise(rows, "")
    assert summary["telemetry_samples"] == 3  # the samples of the first window count, the post-loop ones do not
    assert summary["host_cpu_util_mean_pct"] == pytest.approx(30.0)


def test_only_the_config_s_gpus_are_sampled():
    host_uuids = ["GPU-a", "GPU-b", "GPU-c", "GPU-d"]
    assert selected_gpus(host_uuids, ["GPU-c", "GPU-a"]) == [0, 2]
    assert selected_gpus(host_uuids, None) == [0, 1, 2, 3]
    assert selected_gpus(host_uuids, []) == [] == selected_gpus(host_uuids, ["MIG-x"])


def test_summary_falls_back_to_the_run_after_build_and_reads_gpus():
    rows = []
    for t, phase in ((0.1, "strategy ready"), (0.2, "model built"), (0.3, "warm-up done")):
        for gpu, util in ((0, 80), (1, 60)):
            rows.append(
                host(t, phase, 20.0, 0, 0)
                | {"gpu": gpu, "gpu_util_percent": util, "gpu_mem_used_bytes": 1000 * (gpu + 1), "gpu_power_w": 100.0}
            )
    summary = summarise(rows, "")
    assert summary["telemetry_window"].startswith("whole run after the model was built")
    assert summary["telemetry_samples"] == 2
    assert (summary["gpu_util_mean_pct"], summary["gpu_mem_peak_bytes"], summary["gpu_power_mean_w"]) == (
        70.0,
        2000,
        100.0,
    )
    assert summary["gpu_telemetry_note"] is None


def test_nvml_absent_is_reported_not_raised():
    nvml = Nvml()
    if Path("/dev/nvidiactl").exists():  # a GPU host: NVML starts and lists its GPUs
        assert nvml.available and nvml.handles and nvml.reason == ""
    else:  # CI hosts have no driver: the reason says so, and nothing raised
        assert not nvml.available and nvml.handles == []
        assert nvml.reason.startswith("NVML not available on this host: ")
    nvml.close()


def test_sampler_on_this_host_reads_real_figures_and_stops():
    # the sampler lives in the (idle) parent; the measured worker is a separate busy process, as in a run
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        sampler = Sampler(50.0, lambda: [busy.pid], lambda: "window 1/1").start()
        time.sleep(0.6)
        sampler.stop()
    finally:
        busy.kill()
        busy.wait()
    assert not sampler._thread.is_alive()
    rows = sampler.rows
    assert len(rows) >= 10
    times = [r["t_s"] for r in rows]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert all(0.0 <= r["host_cpu_percent"] <= 100.0 for r in rows)
    assert sum(r["host_cpu_percent"] for r in rows) / len(rows) > 20.0  # one of the cores is kept busy
    assert all(r["workers_rss_bytes"] > 1_000_000 for r in rows)
    assert rows[-1]["net_bytes_sent"] >= rows[0]["net_bytes_sent"]


def test_a_series_is_read_only_inside_its_run_folder_and_only_as_numbers(tmp_path):
    from tfscale.host.telemetry import read_series

    run = tmp_path / "run"
    (run / "telemetry").mkdir(parents=True)
    (tmp_path / "outside.csv").write_text("t_s,host_cpu_percent\n0,1\n")
    (run / "telemetry" / "ok.csv").write_text("t_s,phase,host_cpu_percent,extra\n0.1,timed,50,x\n0.2,timed,oops,y\n")
    (run / "telemetry" / "no-time.csv").write_text("a,b\n1,2\n")
    (run / "telemetry" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    table = read_series(run, "telemetry/ok.csv")
    assert list(table.columns) == ["t_s", "phase", "host_cpu_percent"]  # only the columns tfscale writes
    assert table["t_s"].tolist() == [0.1, 0.2] and table["phase"].tolist() == ["timed", "timed"]
    assert table["host_cpu_percent"].iloc[0] == 50 and table["host_cpu_percent"].isna().iloc[1]
    for relative in ("../outside.csv", str(tmp_path / "outside.csv"), "/dev/zero", "telemetry/no-time.csv",
                     "telemetry/passwd", "telemetry/missing.csv", "telemetry"):  # fmt: skip
        assert read_series(run, relative) is None, relative


def test_pcie_readings_are_spaced_to_fit_the_sampling_rate():
    # two 20 ms readings per GPU may take half a sampling interval: 8 GPUs at 10 Hz (0.32 s of PCIe per 0.1 s) read
    # it every 7th sample; 1 GPU at 10 Hz (0.04 s) every sample; 8 GPUs at 1 Hz every sample
    assert (pcie_every(8, 10), pcie_every(1, 10), pcie_every(2, 10), pcie_every(8, 1), pcie_every(0, 10)) == (
        7,
        1,
        2,
        1,
        1,
    )


class FakeNvml:
    """pynvml's few calls Nvml.read makes, counting the PCIe ones."""

    NVML_CLOCK_SM = 1
    NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES = 0, 1

    def __init__(self):
        self.pcie_calls = 0

    def nvmlDeviceGetUtilizationRates(self, handle):
        return type("U", (), {"gpu": 50})()

    def nvmlDeviceGetMemoryInfo(self, handle):
        return type("M", (), {"used": 1 << 30})()

    def nvmlDeviceGetPowerUsage(self, handle):
        return 250_000

    def nvmlDeviceGetClockInfo(self, handle, clock):
        return 1980

    def nvmlDeviceGetPcieThroughput(self, handle, counter):
        self.pcie_calls += 1
        return 1000


def test_nvml_read_skips_the_pcie_calls_when_told():
    nvml = Nvml.__new__(Nvml)
    nvml.nvml, nvml.indices, nvml.uuids, nvml.handles = FakeNvml(), [0, 1], ["GPU-a", "GPU-b"], ["h0", "h1"]
    rows = nvml.read(pcie=False)
    assert nvml.nvml.pcie_calls == 0 and [r["pcie_tx_bytes_per_s"] for r in rows] == [None, None]
    assert [r["gpu_power_w"] for r in rows] == [250.0, 250.0]
    rows = nvml.read()
    assert nvml.nvml.pcie_calls == 4 and rows[0]["pcie_rx_bytes_per_s"] == 1024000
