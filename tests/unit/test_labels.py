"""Display labels: one definition each, exact values, and missing values as pandas gives them (NaN)."""

import math

from tfscale.labels import layout_label, mode_label, model_label, record_mode


def test_model_label():
    assert model_label("mlp", "small") == "mlp/small"
    assert model_label("mine", None) == "mine"
    assert model_label("mine", math.nan) == "mine"


def test_mode_label_names_the_strategy_or_the_model_parallel_layout():
    assert mode_label("mirrored") == "mirrored"
    assert mode_label("mirrored", math.nan) == "mirrored"  # records from before model parallelism
    assert mode_label(None, "pipeline", 4.0, 8.0, 1, None) == "pipeline 4 stages x 8 micro-batches"
    assert mode_label(None, "hybrid", None, None, 2, 2.0) == "hybrid 2 data x 2 tensor"
    row = {"strategy": None, "parallelism": "tensor", "replicas": 1, "tensor_parallel": 4}
    assert record_mode(row) == "tensor 1 data x 4 tensor"


def test_layout_label():
    assert layout_label(1, 4) == "1 node × 4"
    assert layout_label(4, 1, "multi_worker_mirrored") == "4 nodes × 1"
    assert layout_label(2, 1, "multi_worker_mirrored", link="100mbit") == ("2 nodes × 1, 100mbit")
    assert layout_label(2, 1, "parameter_server", 1, math.nan) == "2 workers + 1 PS"


def test_telemetry_panels_of_model_parallel_configs_name_their_mode():
    import pandas as pd

    from tfscale.htmlreport.figures import config_label

    row = pd.Series(
        {
            "model": "mlp",
            "model_size": "tiny",
            "strategy": None,
            "parallelism": "pipeline",
            "stages": 2.0,
            "micro_batches": 4.0,
            "replicas": 1,
            "tensor_parallel": math.nan,
            "devices": 2,
            "config_id": "abc",
            "nodes": 1,
        }
    )
    assert config_label(row) == "mlp/tiny pipeline 2 stages x 4 micro-batches x2 · abc"  # was "mlp/tiny None x2"
