"""Sizes of the built-in models, pure data: the worker builds the models from them, the plan checks model-parallel
splits against them without importing TensorFlow."""

from __future__ import annotations

CLASSES = 10

MLP_SIZES = {  # (input features, hidden widths)
    "tiny": (256, (256, 256)),
    "small": (784, (1024, 1024)),
    "medium": (784, (2048, 2048, 2048)),
    "large": (1024, (4096, 4096, 4096, 4096)),
}

TRANSFORMER_SIZES = {  # (sequence length, vocabulary, model width, heads, blocks, feed-forward width)
    "tiny": (32, 1000, 64, 2, 1, 128),
    "small": (64, 8000, 128, 4, 2, 512),
    "medium": (128, 16000, 256, 4, 4, 1024),
    "large": (256, 32000, 512, 8, 6, 2048),
}


def pipeline_segments(model: str, size: str) -> int:
    """Layers a pipeline can cut between: mlp's dense layers; transformer's embedding, blocks and output layer."""
    if model == "mlp":
        return len(MLP_SIZES[size][1]) + 1
    return TRANSFORMER_SIZES[size][4] + 2


def tensor_split_problem(model: str, size: str, parts: int) -> str | None:
    """Why the model's sharded dimensions do not divide into `parts` (None when they do)."""
    if model == "mlp":
        widths = MLP_SIZES[size][1]
        bad = [w for w in widths if w % parts]
        return f"hidden widths {list(widths)} are not all divisible by {parts}" if bad else None
    _, _, width, heads, _, ff = TRANSFORMER_SIZES[size]
    if heads % parts or ff % parts:
        return f"heads={heads} and feed-forward width {ff} must both be divisible by {parts}"
    return None
