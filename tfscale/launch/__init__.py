"""Launchers: how a config's processes are started, watched and stopped, behind one interface
(tfscale.launch.base.Launcher). `LAUNCHERS` are those `tfscale run --launcher` takes; `TARGETS` those whose script
`tfscale launch --target` writes."""

from tfscale.launch.base import Job, Launcher, Outcome
from tfscale.launch.kubernetes import KubernetesLauncher
from tfscale.launch.local import LocalLauncher
from tfscale.launch.slurm import SlurmLauncher

LAUNCHERS: dict[str, type[Launcher]] = {"local": LocalLauncher, "slurm": SlurmLauncher}
TARGETS: dict[str, type[Launcher]] = {"slurm": SlurmLauncher, "kubernetes": KubernetesLauncher, "hosts": LocalLauncher}

__all__ = ["LAUNCHERS", "TARGETS", "Job", "Launcher", "LocalLauncher", "Outcome", "SlurmLauncher"]
