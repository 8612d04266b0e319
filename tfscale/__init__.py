"""tfscale: benchmarking and scaling analysis for TensorFlow distributed training.

Public API (docs/python-api.md): `run` (a sweep, as `tfscale run`; returns the records as a pandas DataFrame), `plan`
(the configs a suite expands to), `report` (records to the HTML report), `load_results` (records → pandas DataFrame with
every derived column), `analyze` (those columns for a records DataFrame), `history` (every run of a suite as series,
with the steps found in them), `Workload` (what a user model returns), `__version__`. Importing tfscale imports neither
TensorFlow nor pandas.
"""

from tfscale._version import __version__
from tfscale.api import analyze, history, load_results, plan, report, run
from tfscale.suite.workload import Workload

__all__ = ["Workload", "__version__", "analyze", "history", "load_results", "plan", "report", "run"]
