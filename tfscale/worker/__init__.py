"""The child side of a run: the only package that imports TensorFlow.

`python -m tfscale.worker --spec SPEC.json --result RESULT.json` runs one config (or this rank's part of it) and writes
its measurements; `--commbench` runs the config's all-reduce sweep instead, `--env` writes what TensorFlow knows
about this host, `--check-models MODELS.json` imports and builds user models. `tfscale.contract.worker_argv` builds
these command lines. Logs go to stdout/stderr, which the parent sends to the task's log file; results never travel
through stdout.
"""
