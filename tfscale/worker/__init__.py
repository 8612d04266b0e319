"""The child side of a run: the only package that imports TensorFlow.

`python -m tfscale.worker --spec SPEC.json --result RESULT.json` runs one config and writes its measurements;
`python -m tfscale.worker --env ENV.json` writes what TensorFlow knows about this host. Logs go to stdout/stderr,
which the parent sends to the config's log file; results never travel through stdout.
"""
