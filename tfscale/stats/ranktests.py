"""Rank statistics for comparing two samples, pure Python with exact-value tests: the two-sided Mann-Whitney U
test (normal approximation with tie and continuity corrections), the Hodges-Lehmann shift with its distribution-free
95 % CI, and Benjamini-Hochberg q-values over many tests. tfscale.analysis.compare applies them to configs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tfscale.stats.core import Z_975


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U statistic of the first sample
    p_value: float  # two-sided


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney(a: list[float], b: list[float]) -> MannWhitney:
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        raise ValueError("Mann-Whitney U needs samples on both sides")
    ranks = _ranks(list(a) + list(b))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    counts: dict[float, int] = {}
    for value in list(a) + list(b):
        counts[value] = counts.get(value, 0) + 1
    ties = sum(t**3 - t for t in counts.values())
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return MannWhitney(u, 1.0)
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return MannWhitney(u, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


@dataclass(frozen=True)
class Shift:
    """Hodges-Lehmann shift of `new` over `base` (s) and its 95 % CI; CI ends None when too few samples."""

    estimate: float
    low: float | None
    high: float | None


def hodges_lehmann(base: list[float], new: list[float]) -> Shift:
    """The median of all pairwise differences new_j - base_i, and the CI between the C-th smallest and the C-th
    largest difference, C = floor(n1 n2 / 2 - z_0.975 sqrt(n1 n2 (n1 + n2 + 1) / 12)) (normal approximation of the
    Mann-Whitney distribution; no CI when C < 1)."""
    import numpy as np

    if not base or not new:
        raise ValueError("Hodges-Lehmann needs samples on both sides")
    differences = np.sort((np.asarray(new, dtype=float)[None, :] - np.asarray(base, dtype=float)[:, None]).ravel())
    n1, n2 = len(base), len(new)
    c = math.floor(n1 * n2 / 2 - Z_975 * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12))
    estimate = float(np.median(differences))
    if c < 1:
        return Shift(estimate, None, None)
    return Shift(estimate, float(differences[c - 1]), float(differences[differences.size - c]))


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """q-values in the input order: q_(i) = min over j >= i of p_(j) x m / j (p sorted ascending), at most 1."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    q = [0.0] * count
    running = 1.0
    for rank in range(count, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * count / rank)
        q[index] = running
    return q
