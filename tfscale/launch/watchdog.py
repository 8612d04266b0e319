"""The startup and stall watchdog of a job whose tasks run where the launcher cannot see their processes (Slurm
job steps): it reads the trainers' progress files (contract.PROGRESS_ENV, on the shared run folder) and times them
by its own clock. A file's mtime is the file server's clock, which may differ from this host's; so a change is
dated when this watchdog first sees it (the file's mtime, size or text differing from the last look)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tfscale.launch.base import STOPPED_STALL, STOPPED_STARTUP


@dataclass
class ProgressWatch:
    """Startup (every trainer reported once within `startup_s` of `start`) and stall (no trainer silent for more
    than `stall_s` once it reported, until it wrote its result) deadlines, in seconds on the caller's monotonic
    clock; None: not watched."""

    paths: dict[str, Path]  # trainer task name -> its progress file
    results: dict[str, Path]  # trainer task name -> its result file: once written, the trainer is done
    start: float
    startup_s: float | None
    stall_s: float | None
    _seen: dict[str, tuple[object, float]] = field(default_factory=dict)  # name -> (file state, first seen at)

    def _state(self, path: Path) -> object | None:
        try:
            stat = path.stat()
            return (stat.st_mtime_ns, stat.st_size, path.read_bytes())
        except OSError:
            return None

    def check(self, now: float) -> str | None:
        """STOPPED_STARTUP or STOPPED_STALL when a deadline has passed at `now`, else None."""
        if self.startup_s is None and self.stall_s is None:
            return None
        for name, path in self.paths.items():
            state = self._state(path)
            if state is not None and (name not in self._seen or self._seen[name][0] != state):
                self._seen[name] = (state, now)
        if self.startup_s is not None and now - self.start > self.startup_s and len(self._seen) < len(self.paths):
            return STOPPED_STARTUP
        if self.stall_s is not None:
            running = [name for name in self._seen if not self.results[name].exists()]
            if any(now - self._seen[name][1] > self.stall_s for name in running):
                return STOPPED_STALL
        return None

    def phases(self) -> dict[str, str]:
        """The last phase each trainer reported ("" when none), in task order."""
        return read_phases(self.paths)


def read_phases(paths: dict[str, Path]) -> dict[str, str]:
    """Task name -> the last phase it wrote to its progress file ("" when it wrote none)."""
    phases = {}
    for name, path in paths.items():
        try:
            phases[name] = path.read_text(encoding="utf-8")
        except OSError:
            phases[name] = ""
    return phases
