"""Worker-side pieces that need TensorFlow."""

import pytest

pytestmark = pytest.mark.e2e


def test_strategy_registries_agree():
    from tfscale.axes import STRATEGIES
    from tfscale.worker.strategies import BUILDERS

    assert set(BUILDERS) == set(STRATEGIES)
