"""The worker's one timing helper, on a fake clock: exact values."""

import pytest

from tfscale.worker.timing import time_calls


class Clock:
    """Advances by the cost of each call made since it was last read."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_windows_divide_by_their_calls_and_keep_warmup_and_before_untimed():
    clock, log = Clock(), []

    def call(*args):
        clock.now += 2.0  # each call costs 2 s
        log.append(("call", args))
        return len(log)

    def sync(value):
        clock.now += 1.0  # the sync costs 1 s, once per sample
        log.append(("sync", value))
        return value * 10

    def more(values):
        log.append(len(values))
        return True

    timed = time_calls(call, sync, samples=2, warmup=1, per_sample=3, clock=clock, more=more)
    assert timed.samples_s == [(3 * 2.0 + 1.0) / 3] * 2  # three calls and one sync per sample
    assert timed.last == log[-2][1] * 10  # what sync returned for the last call
    assert [entry for entry in log if isinstance(entry, int)] == [1, 2]  # after each sample, in order
    assert sum(1 for entry in log if isinstance(entry, tuple) and entry[0] == "call") == 1 + 2 * 3


def test_more_decides_when_the_samples_stop():
    clock = Clock()
    costs = iter([3.0, 1.0, 1.0, 1.0, 1.0, 1.0])

    def call():
        clock.now += next(costs)

    # stop once two samples in a row cost the same: after the third sample
    timed = time_calls(call, lambda _: None, more=lambda v: len(v) < 2 or v[-1] != v[-2], clock=clock)
    assert timed.samples_s == [3.0, 1.0, 1.0]


def test_samples_bound_more():
    clock = Clock()

    def call():
        clock.now += 1.0

    assert time_calls(call, lambda _: None, samples=4, more=lambda v: True, clock=clock).samples_s == [1.0] * 4


def test_neither_samples_nor_more_is_refused():
    with pytest.raises(ValueError, match="give samples, more, or both"):
        time_calls(lambda: None, lambda _: None)
