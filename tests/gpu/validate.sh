#!/usr/bin/env bash
# GPU validation: what only a GPU can confirm, on a host with 2 or more GPUs and tfscale installed with the `gpu`
# extra. Not run in CI (no GPU there). Runs tests/gpu/validate.yaml (every strategy and parallelism mode once on 2
# GPUs: 8 configs of 30 timed steps; never timed, no GPU where it was written) with NCCL_DEBUG=INFO, then prints
# per config and check PASS, FAIL or SKIP (tests/gpu/checks.py): NCCL really ran (collective_implementation and NCCL's own log lines; DTensor included),
# peak memory is TF's allocator peak of a GPU, NVML's energy counters advanced. Exit status 1 if a check failed.
#   tests/gpu/validate.sh [--keep]     (--keep: leave the run's records, logs and report in the printed folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=${1:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/tfscale-gpu-validate.XXXXXX")
if [ "$keep" = "--keep" ]; then echo "validation run kept in $work"; else trap 'rm -rf "$work"' EXIT; fi

gpus=$(python -c "import tensorflow as tf; print(len(tf.config.list_physical_devices('GPU')))" 2>/dev/null || echo 0)
if [ "$gpus" -lt 2 ]; then
  echo "tests/gpu/validate.sh needs 2 GPUs that TensorFlow sees; it sees $gpus (pip install -e '.[gpu]'; docs/gpu.md)" >&2
  exit 2
fi
tfscale env | head -1
# The run's own exit status says whether every config succeeded; the checks say the same per config, with more.
NCCL_DEBUG=INFO tfscale run tests/gpu/validate.yaml --run-id validate \
  --results-dir "$work/results" --reports-dir "$work/reports" || true
python tests/gpu/checks.py "$work/results/gpu-validate/validate"
