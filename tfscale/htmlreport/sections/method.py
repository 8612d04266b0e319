"""The report's section "How these figures were measured": the measuring method in one paragraph."""

from __future__ import annotations

from tfscale.htmlreport.sections.base import Context

ID = "method"
TITLE = "How these figures were measured"

TEXT = """<div class="method">
<p>Each config ran in a fresh worker process. Step time: wall clock over timing windows that each end in a host
sync; warm-up steps, including the first (tracing and compilation), are not timed; windows are calibrated to a
minimum length, warm-up runs until step time is steady, and windows are timed until the median's CI reaches its
target or the time budget is spent (records: warmup_stop, measure_stop). Medians with a distribution-free
95&nbsp;% confidence interval (order statistics), MAD = median absolute deviation. Speedup and efficiency carry a
95&nbsp;% CI from a percentile bootstrap of the config's and the baseline's windows. Throughput = global batch /
median step time. Scaling efficiency compares each config with the 1-node, 1-device config of the same workload in
the same run: strong scaling (global batch fixed) T1/(N&middot;T<sub>N</sub>); weak scaling (per-replica batch fixed)
throughput<sub>N</sub>/(N&middot;throughput<sub>1</sub>). Memory: TF allocator peak per GPU over the timed steps, or
on CPU the worker process's peak RSS (see memory_kind). Empty cells mean "does not apply / not measured", never
zero. Tables show step times in ms, memory in MiB/GiB and efficiencies in %; hover a cut cell for its whole
text.</p>
</div>"""


def body(context: Context) -> str:
    return TEXT
