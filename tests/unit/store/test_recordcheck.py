"""The record checks read what each column holds from the column registry (tfscale.metrics.COLUMNS)."""

import pytest

from tfscale import metrics as m
from tfscale.store.recordcheck import column_problem, record_problem


def test_every_stored_column_has_a_kind_and_is_a_record_column():
    stored = m.columns_of(m.STORED)
    assert {c.name for c in stored} == set(m.RECORD_COLUMNS)  # one list, not two that drift
    assert all(c.kind in m.KINDS and c.meaning for c in stored)


@pytest.mark.parametrize(
    ("name", "good", "bad", "message"),
    [
        (m.ENERGY_J, 12.5, "a lot", "energy_j must be a number"),  # columns no hand list checked before
        (m.FLOPS_METHOD, "xla cost analysis", 3, "flops_method must be text"),
        (m.TOP_OPS, ["MatMul dense: 1.000 ms"], [1, 2], "top_ops must be a list of texts"),
        (m.CLUSTER, {"worker": 2}, "2 workers", "cluster must be a JSON object or list"),
        (m.PROCESS_SPREAD_DF, 6, -1, "process_spread_df must be a count"),
        (m.SLURM_JOB_ID, "4711", 4711, "slurm_job_id must be text"),
        (m.CI_MET, True, 1, "ci_met must be true or false"),
        (m.STEP_TIMES_S, [0.1, 0.2], [0.1, "x"], "step_times_s must be a list of numbers"),
        ("a_newer_column_s", 1.0, "1 s", "a_newer_column_s must be a number"),  # outside the registry: by its unit
    ],
)
def test_each_kind_is_checked(name, good, bad, message):
    assert column_problem(name, good) is None
    assert column_problem(name, bad) == message
    assert record_problem({m.CONFIG_ID: "abc", name: bad}) == message
