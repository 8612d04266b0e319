"""Cutting a chain of layers into pipeline stages. Pure (no TensorFlow)."""

from __future__ import annotations

import functools
from collections.abc import Sequence


def balanced_cuts(sizes: Sequence[int], stages: int) -> list[int]:
    """Start index of each stage after the first: contiguous, non-empty groups of `sizes` (the layers' parameter
    bytes) minimising the largest group, ties broken towards earlier cuts. Raises ValueError when there are fewer
    layers than stages."""
    n = len(sizes)
    if not 1 <= stages <= n:
        raise ValueError(f"cannot cut {n} layers into {stages} non-empty stages")
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)

    @functools.cache
    def best(start: int, parts: int) -> tuple[int, tuple[int, ...]]:
        """(largest group, cut indices) for layers[start:] in `parts` groups."""
        if parts == 1:
            return prefix[n] - prefix[start], ()
        choice = None
        for end in range(start + 1, n - parts + 2):  # the first group is layers[start:end]
            rest, cuts = best(end, parts - 1)
            worst = max(prefix[end] - prefix[start], rest)
            if choice is None or worst < choice[0]:
                choice = (worst, (end, *cuts))
        return choice

    return list(best(0, stages)[1])


def groups(items: Sequence, cuts: Sequence[int]) -> list[list]:
    """items cut at the given start indices."""
    bounds = [0, *cuts, len(items)]
    return [list(items[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def bubble_theory(stages: int, micro_batches: int) -> float:
    """GPipe's idle share of a step: (S - 1) / (M + S - 1)."""
    return (stages - 1) / (micro_batches + stages - 1)
