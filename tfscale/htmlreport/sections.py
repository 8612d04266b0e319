"""The report's sections in reading order, each with an id for the contents, and the fixed text each one opens
with. A section with nothing to show is left out; the contents say which and why (`Omitted`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Omitted:
    """A section left out of the report: nothing of it ran. `reason` goes into the contents."""

    reason: str


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    body: str | Omitted


MEASURED = """<div class="method">
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

LAYOUTS = """<p>Layouts: "1 node × 4" is one process with 4 devices; "2 nodes × 2" a cluster of processes (one per node
or TF task) talking gRPC; "2 workers + 1 PS" a parameter-server cluster. rank_throughput min/max: the spread of the
training ranks' own throughputs; straggler: a rank more than 10&nbsp;% slower than the median rank.</p>"""

COMM = """<p class="method">For each multi-replica data-parallel config, beside the fused step: <b>compute</b> = a step
that only computes per-replica gradients; <b>exposed</b> = fused step &minus; compute; <b>split</b> = the all-reduce of
computed gradients plus the optimizer update, through the strategy's own path; <b>isolated</b> = the all-reduce alone
of tensors shaped like the gradients; <b>trace</b> = per step, the union of collective-op intervals in the profiler
trace of extra untimed steps (<code>profile: true</code>; it includes waiting for peers; open a trace with
<code>tensorboard --logdir results/&lt;suite&gt;/&lt;run&gt;/&lt;trace_path&gt;</code>); <b>model</b> = the
commbench &alpha;-&beta; fit at the gradient bytes.
overlap_fraction = (compute + split &minus; fused) / split, clamped to [0, 1]. All are medians. The notes column
names every pair of estimates that disagree by more than 25&nbsp;%, or says why a config has no figures.</p>"""

TELEMETRY = """<p class="method">Sampled by the parent process (telemetry_hz per second, default 10) while each config
ran: host CPU use and network bytes (psutil, whole host), the resident memory of the config's worker process trees,
and per GPU of the config (by UUID) through NVML utilisation, memory used, power, SM clock and PCIe throughput. Means
are over the timed windows, or over the run after the model was built when the timed steps were shorter than the
sampling interval (telemetry_window says which). The series of each config is in the run folder (telemetry_path,
CSV); pick a config in each plot's menu.</p>"""

OPS = """From the profiler trace of the extra, untimed steps of configs with <code>profile: true</code>: TF's
executor records each op as an event. Ops of one step run at once on several threads, so each instant of the traced
window (first op's start to last op's end) is shared equally by the ops running then, and an instant with none
running (the host launching the step, syncing) counts as other: the groups add up to the window
(<code>op_window_s</code>) exactly. <code>traced_step_s</code>: wall time of each traced step, a host sync after
each. Top ops: each op's own duration per step, overlaps included (<code>tfscale/opgroups.py</code>)."""

ENERGY = """Energy over the timed windows: on GPUs NVML's total-energy counters of the config's GPUs, summed over its
ranks; on CPUs the host's RAPL package counters (every process on the host; single-process configs only).
joules_per_example = energy_j / (energy_window_s &times; throughput). With <code>price_per_device_hour</code> in the
suite: cost_per_million_examples = price &times; devices / 3600 &times; 10<sup>6</sup> / throughput
(<code>tfscale/energy.py</code>)."""

EVERY_CONFIG = "<p>Click a column header to sort. Failed and timed-out configs are shaded and carry their reason.</p>"
ENVIRONMENT = "<p>Rows where runs differ are highlighted.</p>"

INPUT = """With <code>data: files</code> the step reads TFRecord files written once per workload into tfscale's
cache (or the model's own <code>dataset_fn</code>) through a tf.data pipeline: files sharded per input pipeline,
parallel interleave, parse and decode map, shuffle, repeat, augmentation, batch, prefetch. Input wait per step: the
median step minus the median of the same step fed one of the pipeline's batches held in memory, with a bootstrap 95
% CI (with <code>profile: true</code>, <code>op_time_input_s</code> is the trace's figure: the iterator ops per
traced step); input-bound: a wait above 10 % of the step whose CI is above 0. Input-only throughput: the pipeline
drained alone (no model) after warm-up, summed over a cluster's workers; headroom = that / the training throughput
(above 1, the pipeline alone outruns the step: a wait then comes from sharing the CPU with it, not from its speed).
Logical CPU devices share the host's cores with the pipeline (<code>tfscale/inputs.py</code>)."""
