"""What only a GPU can confirm, read back from a run of tests/gpu/validate.yaml (tests/gpu/validate.sh runs it):
`python tests/gpu/checks.py RUN_FOLDER` prints one line per check and config, PASS, FAIL or SKIP with the reason,
and exits 1 if any failed. The checks are pure functions of the records and the logs (exact-value tests:
tests/unit/test_gpu_checks.py); the workers ran with NCCL_DEBUG=INFO so that NCCL's own log lines say it ran.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.axes import mode_of
from tfscale.worker.energy import NVML_METHOD

NCCL_LINE = "NCCL INFO"  # every line NCCL logs under NCCL_DEBUG=INFO
PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@dataclass(frozen=True)
class Check:
    verdict: str  # PASS, FAIL or SKIP
    check: str  # what was checked: "ok", "nccl", "allocator peak", "energy"
    config: str  # the config, in words
    detail: str

    def line(self) -> str:
        return f"{self.verdict}  {self.check:<15} {self.config}: {self.detail}"


def config_words(record: dict[str, Any]) -> str:
    parts = (record.get(m.STRATEGY), record.get(m.PARALLELISM) or "data")
    return f"{' '.join(p for p in parts if p)} {record.get(m.NODES)}x{record.get(m.DEVICES_PER_NODE)}"


def expects_nccl(record: dict[str, Any]) -> str | None:
    """Why a config's collectives should run on NCCL, or None where it has none that would: MultiWorkerMirrored
    (auto is NCCL on GPUs), Mirrored over 2+ GPUs (its default cross-device ops, NcclAllReduce) and DTensor meshes
    (tensor, hybrid: initialize_accelerator_system sets NCCL for their all-reduce and all-gather)."""
    mode = mode_of(record[m.STRATEGY], record.get(m.PARALLELISM) or "data")
    if mode == "tensor":
        return "DTensor's collectives"
    if record[m.STRATEGY] == "multi_worker_mirrored":
        return "MultiWorkerMirrored's all-reduce"
    if mode == "synchronous" and record[m.STRATEGY] == "mirrored" and (record.get(m.DEVICES) or 1) > 1:
        return "Mirrored's NcclAllReduce"
    return None


def check_nccl(record: dict[str, Any], log: str) -> Check:
    words = config_words(record)
    why = expects_nccl(record)
    if why is None:
        return Check(SKIP, "nccl", words, "no collective that runs on NCCL")
    lines = log.count(NCCL_LINE)
    implementation = record.get(m.COLLECTIVE_IMPLEMENTATION)
    if record[m.STRATEGY] == "multi_worker_mirrored" and implementation != "NCCL":
        return Check(FAIL, "nccl", words, f"collective_implementation {implementation!r}, not 'NCCL'")
    if not lines:
        return Check(FAIL, "nccl", words, f"{why}: no {NCCL_LINE!r} line in its logs (NCCL never started)")
    return Check(PASS, "nccl", words, f"{why}: {lines} {NCCL_LINE!r} lines in its logs")


def check_peak(record: dict[str, Any]) -> Check:
    """TF's allocator peak of a GPU (reset after warm-up), not the process's RSS; PS configs are timed by a chief
    with no GPU, whose peak is its process's."""
    words = config_words(record)
    if record[m.STRATEGY] == "parameter_server":
        return Check(SKIP, "allocator peak", words, "the chief computes on no GPU: its process peak is recorded")
    kind, device, peak = record.get(m.MEMORY_KIND), record.get(m.PEAK_MEMORY_DEVICE), record.get(m.PEAK_MEMORY_BYTES)
    if kind != m.MEMORY_KIND_ALLOCATOR_PEAK or not str(device).startswith("GPU:") or not peak or peak <= 0:
        return Check(FAIL, "allocator peak", words, f"memory_kind {kind!r}, device {device!r}, {peak!r} bytes")
    return Check(PASS, "allocator peak", words, f"{peak / 2**20:.1f} MiB on {device}")


def check_energy(record: dict[str, Any]) -> Check:
    """NVML's energy counters advanced over the timed windows."""
    words = config_words(record)
    energy, window, method = record.get(m.ENERGY_J), record.get(m.ENERGY_WINDOW_S), record.get(m.ENERGY_METHOD)
    if method != NVML_METHOD or not energy or energy <= 0 or not window:
        return Check(FAIL, "energy", words, f"energy_j {energy!r}: {method}")
    return Check(PASS, "energy", words, f"{energy:.1f} J over {window:.2f} s ({energy / window:.0f} W)")


def check_record(record: dict[str, Any], log: str) -> list[Check]:
    words = config_words(record)
    if record.get(m.STATUS) != m.STATUS_OK:
        return [Check(FAIL, "ok", words, f"{record.get(m.STATUS)}: {record.get(m.REASON)}")]
    return [check_nccl(record, log), check_peak(record), check_energy(record)]


def check_run(records: list[dict[str, Any]], log_of: Callable[[str], str]) -> list[Check]:
    """Every check of every record; `log_of(config_id)` is the text of all of that config's logs."""
    return [check for record in records for check in check_record(record, log_of(record[m.CONFIG_ID]))]


def read_run(folder: Path) -> tuple[list[dict[str, Any]], Callable[[str], str]]:
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line.strip()]

    def log_of(config_id: str) -> str:
        logs = sorted((folder / "logs").glob(f"{config_id}*.log"))
        return "".join(path.read_text(encoding="utf-8", errors="replace") for path in logs)

    return records, log_of


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/gpu/checks.py RUN_FOLDER", file=sys.stderr)
        return 2
    checks = check_run(*read_run(Path(argv[0])))
    for check in checks:
        print(check.line())
    count = {verdict: sum(c.verdict == verdict for c in checks) for verdict in (FAIL, PASS, SKIP)}
    failed = count[FAIL]
    print(f"{failed} failed, {count[PASS]} passed, {count[SKIP]} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
