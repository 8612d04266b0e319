"""How worker processes are started and stopped. `local` runs them on this host; later launchers (simulated
hosts, Slurm) offer the same `run_worker` contract: argv + log file + timeout in, `ProcessOutcome` out."""

from tfscale.launch.local import ProcessOutcome, run_worker

__all__ = ["ProcessOutcome", "run_worker"]
