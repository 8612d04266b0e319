"""Communication timing on real strategies."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("devices", [2, 4])
def test_split_and_fused_steps_give_bit_identical_sgd_weights(devices):
    done = subprocess.run([sys.executable, str(HERE / "split_vs_fused.py"), str(devices)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"identical": True, "iterations": [3, 3], "changed": True}
