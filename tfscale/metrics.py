"""Every column in one place, alphabetised: the column registry. Each is one line, `column(name, kind, meaning,
group)`: what it holds (the store's record checks read it, tfscale.store.recordcheck), its unit and meaning (docs/records.md
is generated from here, `tfscale export --format tensorboard` describes its metrics with it) and where it appears
(stored in records, derived by the analysis, or a table's). A new column is one line here (and, if stored, its place
in RECORD_COLUMNS; a test checks the two agree).

Users' scripts read these names from records and DataFrames: add new ones; a stored name changes only with a new
store.SCHEMA_VERSION whose update_to_N renames it in old records (store.RENAMED lists every rename, and
docs/records.md shows it). Units are in the names: `_s`, `_bytes`, `_per_s` (`_examples_per_s` on every throughput),
`_w`, `_j`, `_pct` for 0-100; a bare fraction or efficiency is 0-1. The analysis adds the derived columns in the second
block; they are never stored in records.
"""

from dataclasses import dataclass

from tfscale.axes import AXES, SETTINGS

# What a column holds (the store checks every stored one; docs/records.md shows them). AXIS: its axis's type and
# choices (tfscale.axes). A count is an int >= 0; numbers and texts are lists of them; an object is JSON (dict, list).
TEXT, NUMBER, COUNT, FLAG = "text", "number", "count", "flag"
NUMBERS, TEXTS, OBJECT, AXIS = "numbers", "texts", "object", "axis"
KINDS = (TEXT, NUMBER, COUNT, FLAG, NUMBERS, TEXTS, OBJECT, AXIS)
# Where a column appears: stored in records, derived by tfscale.analysis, or in one of two tables.
STORED, DERIVED, PREDICT, LAYOUT_TABLE = "stored", "derived", "predict", "layout table"
GROUPS = (STORED, DERIVED, PREDICT, LAYOUT_TABLE)


@dataclass(frozen=True)
class Column:
    """One column, declared once: its name, what it holds, its unit and meaning, and where it appears."""

    name: str
    kind: str  # TEXT, NUMBER, COUNT, FLAG, NUMBERS, TEXTS, OBJECT or AXIS
    meaning: str  # its unit first where it has one ("s, ...", "bytes/s, ..."), then what it holds
    group: str  # STORED, DERIVED, PREDICT or LAYOUT_TABLE


COLUMNS: dict[str, Column] = {}  # name -> Column, in the order declared below (alphabetised per group)


def column(name: str, kind: str, meaning: str, group: str) -> str:
    """Declare a column (one line below each); returns its name, the constant code uses."""
    if name in COLUMNS or kind not in KINDS or group not in GROUPS:
        raise ValueError(f"column {name!r}: declared twice, or an unknown kind or group")
    COLUMNS[name] = Column(name, kind, meaning, group)
    return name


def columns_of(group: str) -> list[Column]:
    """The columns of one group, in declaration order."""
    return [c for c in COLUMNS.values() if c.group == group]


# One line per column: the table reads down, so the formatter leaves it as written.
# fmt: off

# --- stored in every record (records.jsonl) -------------------------------------------------------------------
ALGBW_BYTES_PER_S = column("algbw_bytes_per_s", NUMBER, "bytes/s, grad_bytes / comm_time_isolated_s (nccl-tests algbw)", STORED)
BATCH_POLICY = column("batch_policy", AXIS, "\"weak\": batch_size per replica; \"strong\": batch_size is the global batch", STORED)
BATCH_SIZE = column("batch_size", AXIS, "examples, as written in the suite (see batch_policy)", STORED)
BUBBLE_FRACTION = column("bubble_fraction", NUMBER, "pipeline: measured idle share, 1 - sum(stage busy) / (stages x step)", STORED)
BUBBLE_FRACTION_THEORY = column("bubble_fraction_theory", NUMBER, "pipeline: GPipe idle share (S-1)/(M+S-1)", STORED)
BUSBW_BYTES_PER_S = column("busbw_bytes_per_s", NUMBER, "bytes/s, algbw x 2(n-1)/n with n replicas (nccl-tests busbw)", STORED)
BUSBW_CI95_HIGH_BYTES_PER_S = column("busbw_ci95_high_bytes_per_s", NUMBER, "bytes/s, busbw at the CI's low all-reduce time", STORED)
BUSBW_CI95_LOW_BYTES_PER_S = column("busbw_ci95_low_bytes_per_s", NUMBER, "bytes/s, busbw at the CI's high all-reduce time", STORED)
BYTES_PER_PACK = column("bytes_per_pack", AXIS, "multi_worker_mirrored: CommunicationOptions.bytes_per_pack; 0 = TF's choice", STORED)
CACHE = column("cache", AXIS, "data files: bool, tf.data cache of the decoded examples after the first epoch", STORED)
CI_COVERS = column("ci_covers", TEXT, "what spread the step time's CI covers: within one process | between repeats processes", STORED)
CI_HALF_WIDTH_REL = column("ci_half_width_rel", NUMBER, "larger side of the median step's 95 % CI / median; empty below 6 samples", STORED)
CI_MET = column("ci_met", FLAG, "bool: ci_half_width_rel <= ci_target", STORED)
CI_TARGET = column("ci_target", NUMBER, "the target_ci the config was measured to (fraction of the median, e.g. 0.02)", STORED)
CLUSTER = column("cluster", OBJECT, "cluster strategies: task counts per TF job, e.g. {\"chief\": 1, \"worker\": 2, \"ps\": 1}", STORED)
COLLECTIVE = column("collective", AXIS, "multi_worker_mirrored: all-reduce implementation auto|ring|nccl", STORED)
COLLECTIVE_IMPLEMENTATION = column("collective_implementation", TEXT, "multi_worker_mirrored: all-reduce TF ran: RING|NCCL", STORED)
COMM_METHOD = column("comm_method", TEXT, "how the communication figures were measured, in words", STORED)
COMM_TIME_EXPOSED_CI95_HIGH_S = column("comm_time_exposed_ci95_high_s", NUMBER, "s, 95 % CI of comm_time_exposed_s (bootstrap)", STORED)
COMM_TIME_EXPOSED_CI95_LOW_S = column("comm_time_exposed_ci95_low_s", NUMBER, "s, 95 % CI of comm_time_exposed_s (bootstrap)", STORED)
COMM_TIME_EXPOSED_S = column("comm_time_exposed_s", NUMBER, "s, median fused step - median compute-only step", STORED)
COMM_TIME_ISOLATED_S = column("comm_time_isolated_s", NUMBER, "s, median all-reduce alone of tensors shaped like the gradients", STORED)
COMM_TIME_MODEL_S = column("comm_time_model_s", NUMBER, "s, alpha-beta fit of the commbench sweep evaluated at grad_bytes", STORED)
COMM_TIME_PULL_S = column("comm_time_pull_s", NUMBER, "s, parameter_server: median round of every worker reading all variables", STORED)
COMM_TIME_PUSH_S = column("comm_time_push_s", NUMBER, "s, parameter_server: median round of every worker applying an update", STORED)
COMM_TIME_SPLIT_S = column("comm_time_split_s", NUMBER, "s, median all-reduce + optimizer update of computed gradients", STORED)
COMM_TIME_TRACE_S = column("comm_time_trace_s", NUMBER, "s per step, union of collective-op intervals in the profiler trace", STORED)
COMPUTE_TIMES_S = column("compute_times_s", NUMBERS, "list of s, the compute-only step's samples (one per window, per step)", STORED)
COMPUTE_TIME_S = column("compute_time_s", NUMBER, "s, median step computing per-replica gradients only (no communication)", STORED)
CONFIG_ID = column("config_id", TEXT, "12 hex digits: hash of the normalised config axes (plan.config_id)", STORED)
CROSS_DEVICE_OPS = column("cross_device_ops", AXIS, "mirrored: nccl|hierarchical_copy|reduction_to_one_device; empty: TF's default", STORED)
DATA = column("data", AXIS, "synthetic (one in-memory batch repeated) | files (TFRecord files through tf.data)", STORED)
DATA_CACHE_BYTES = column("data_cache_bytes", COUNT, "bytes, the dataset files on disk (data files)", STORED)
DATA_CACHE_PATH = column("data_cache_path", TEXT, "folder of the dataset files, in the tfscale cache (data files)", STORED)
DATA_COMPRESSION = column("data_compression", AXIS, "data files: none|gzip|zlib, the TFRecord compression", STORED)
DATA_EXAMPLES = column("data_examples", AXIS, "data files: examples written to the dataset files", STORED)
DATA_GENERATION_S = column("data_generation_s", NUMBER, "s, writing the dataset files; 0 when an earlier run's files were reused", STORED)
DATA_PARALLEL_CALLS = column("data_parallel_calls", AXIS, "data files: parallel calls of the maps, or auto (AUTOTUNE)", STORED)
DATA_SHARDS = column("data_shards", AXIS, "data files: TFRecord files the examples are split into", STORED)
DATA_SOURCE = column("data_source", TEXT, "what the step read: synthetic in-memory batch | tfrecord files | user dataset_fn", STORED)
DEVICE = column("device", TEXT, "cpu|gpu, the suite's device", STORED)
DEVICES = column("devices", COUNT, "nodes * devices_per_node: the N of scaling efficiency", STORED)
DEVICES_PER_NODE = column("devices_per_node", AXIS, "accelerators (or logical CPU devices) per node", STORED)
DEVICE_KIND = column("device_kind", TEXT, "cpu-logical|gpu|gpu-logical", STORED)
DURATION_S = column("duration_s", NUMBER, "s, wall time of the config's processes seen by the parent (to the launcher's 0.1 s poll)", STORED)
ENERGY_J = column("energy_j", NUMBER, "J over the timed windows (energy_window_s): GPU or CPU package counters, see energy_method", STORED)
ENERGY_METHOD = column("energy_method", TEXT, "which counters energy_j read (tfscale.worker.energy), or why it is empty", STORED)
ENERGY_WINDOW_S = column("energy_window_s", NUMBER, "s, wall time between the two counter readings around the timed windows", STORED)
FINAL_LOSS = column("final_loss", NUMBER, "loss of the last timed step: a check that training ran (not a quality figure)", STORED)
FINISHED_AT = column("finished_at", TEXT, "ISO 8601 UTC time the parent finished this config", STORED)
FIRST_STEP_S = column("first_step_s", NUMBER, "s, first step with tracing / XLA compile, synced (grad_noise_every > 1: probed + plain)", STORED)
FLOPS_METHOD = column("flops_method", TEXT, "how flops_per_step was counted (tfscale.measures.flops), or why it is empty", STORED)
FLOPS_PER_REPLICA_STEP = column("flops_per_replica_step", COUNT, "FLOPs of one replica's forward + backward on its batch share", STORED)
FLOPS_PER_STEP = column("flops_per_step", COUNT, "FLOPs of one training step over all replicas (matrix products, convolutions)", STORED)
GLOBAL_BATCH_SIZE = column("global_batch_size", COUNT, "examples per step over all replicas", STORED)
GPU_MEM_PEAK_BYTES = column("gpu_mem_peak_bytes", NUMBER, "bytes, highest NVML memory used on any GPU while sampled", STORED)
GPU_POWER_MEAN_W = column("gpu_power_mean_w", NUMBER, "W, mean NVML power draw per GPU sample", STORED)
GPU_TELEMETRY_NOTE = column("gpu_telemetry_note", TEXT, "why the GPU telemetry columns are empty (no NVML, no GPU)", STORED)
GPU_UTIL_MEAN_PCT = column("gpu_util_mean_pct", NUMBER, "%, mean NVML utilisation over the GPU samples", STORED)
GRAD_BYTES = column("grad_bytes", NUMBER, "bytes of one full set of gradients (trainable variables' sizes x dtype sizes)", STORED)
GRAD_NOISE_METHOD = column("grad_noise_method", TEXT, "how grad_noise_scale was estimated, in words", STORED)
GRAD_NOISE_SCALE = column("grad_noise_scale", NUMBER, "examples, B_simple = tr(Sigma)/|G|^2 of the probed steps; empty if |G|^2 <= 0", STORED)
GRAD_NOISE_SCALE_CI95_HIGH = column("grad_noise_scale_ci95_high", NUMBER, "examples, 95 % CI; empty with the low end set: unbounded", STORED)
GRAD_NOISE_SCALE_CI95_LOW = column("grad_noise_scale_ci95_low", NUMBER, "examples, 95 % CI (Fieller), empty below 8 windows", STORED)
HOST = column("host", TEXT, "host name the worker ran on", STORED)
HISTORY_SPREAD_DF = column("history_spread_df", COUNT, "int, degrees of freedom of history_spread_sd_rel (processes - 1, summed)", STORED)
HISTORY_SPREAD_RUNS = column("history_spread_runs", COUNT, "int, earlier runs of the suite on this host history_spread_sd_rel was pooled over", STORED)
HISTORY_SPREAD_SD_REL = column("history_spread_sd_rel", NUMBER, "log-sd of process medians beyond noise in the suite's earlier runs on this host (repeats); pooled into process_spread_sd_rel", STORED)
HOST_CPU_UTIL_MEAN_PCT = column("host_cpu_util_mean_pct", NUMBER, "%, mean system-wide CPU use (psutil) over the samples", STORED)
HOST_RSS_PEAK_BYTES = column("host_rss_peak_bytes", NUMBER, "bytes, worker process peak resident set (VmHWM)", STORED)
INPUT_BOUND = column("input_bound", FLAG, "bool, data files: input_wait_time_s > 10 % of the step and its CI above 0", STORED)
INPUT_BOUND_NOTE = column("input_bound_note", TEXT, "the figures that decided input_bound, one sentence", STORED)
INPUT_HEADROOM = column("input_headroom", NUMBER, "input_throughput_examples_per_s / throughput: above 1 the pipeline outruns the step", STORED)
INPUT_MEMORY_TIMES_S = column("input_memory_times_s", NUMBERS, "list of s per step, the step fed one pipeline batch held in memory", STORED)
INPUT_PIPELINE = column("input_pipeline", TEXT, "the tf.data pipeline the config read, in words (settings included)", STORED)
INPUT_THROUGHPUT_EXAMPLES_PER_S = column("input_throughput_examples_per_s", NUMBER, "examples/s, the pipeline alone, all workers", STORED)
INPUT_WAIT_METHOD = column("input_wait_method", TEXT, "how input_wait_time_s was measured, in words", STORED)
INPUT_WAIT_TIME_CI95_HIGH_S = column("input_wait_time_ci95_high_s", NUMBER, "s, 95 % CI of input_wait_time_s (bootstrap)", STORED)
INPUT_WAIT_TIME_CI95_LOW_S = column("input_wait_time_ci95_low_s", NUMBER, "s, 95 % CI of input_wait_time_s (bootstrap)", STORED)
INPUT_WAIT_TIME_S = column("input_wait_time_s", NUMBER, "s per step, median step - median step on an in-memory batch (data files)", STORED)
JIT = column("jit", AXIS, "bool, XLA compilation of the per-replica gradient computation", STORED)
LAUNCHER = column("launcher", TEXT, "how the processes were started: local|slurm", STORED)
LINK_BYTES_PER_S = column("link_bytes_per_s", NUMBER, "bytes/s, simulated hosts: configured rate of each node's link, per direction", STORED)
LINK_CHECK_METHOD = column("link_check_method", TEXT, "how link_measured_bytes_per_s was measured, in words", STORED)
LINK_MEASURED_BYTES_PER_S = column("link_measured_bytes_per_s", NUMBER, "bytes/s, TCP goodput node 0 -> node 1 before the config", STORED)
LINK_NCCL_SETTINGS = column("link_nccl_settings", TEXT, "simulated hosts on GPUs: the NCCL environment that keeps NCCL on the link", STORED)
LOG_PATH = column("log_path", TEXT, "path of this config's log file, relative to the run folder", STORED)
LOG_TAIL = column("log_tail", TEXT, "last lines of the log of a failed config; empty when ok", STORED)
MAX_MEASURE_S = column("max_measure_s", AXIS, "s, run setting: most seconds of timed windows per config (steps: auto)", STORED)
MAX_WARMUP_S = column("max_warmup_s", AXIS, "s, run setting: most seconds of warm-up windows (warmup_steps: auto)", STORED)
MEASURE_STOP = column("measure_stop", TEXT, "why the timed windows stopped: target_ci met | max_measure_s spent | fixed steps", STORED)
MEMORY_KIND = column("memory_kind", TEXT, "what peak_memory_bytes measures: tf_allocator_peak_per_device|process_peak_rss|forked_process_peak_rss", STORED)
MICRO_BATCHES = column("micro_batches", AXIS, "pipeline: micro-batches per step", STORED)
MIN_WINDOW_S = column("min_window_s", AXIS, "s, run setting: shortest timing window when window_steps is auto", STORED)
MODEL = column("model", AXIS, "zoo name (mlp|cnn|transformer) or a suite's user model name", STORED)
MODEL_PARALLEL_METHOD = column("model_parallel_method", TEXT, "how the model was split and the bubble measured, in words", STORED)
MODEL_SIZE = column("model_size", AXIS, "zoo size knob tiny|small|medium|large; empty for user models", STORED)
NETWORK_LINK = column("network_link", AXIS, "simulated hosts: link rate as written (tc syntax, e.g. 1gbit); empty: loopback", STORED)
NET_BYTES_PER_S = column("net_bytes_per_s", NUMBER, "bytes/s, host network bytes sent + received (all interfaces) over the samples", STORED)
NODES = column("nodes", AXIS, "number of nodes (hosts); for cluster strategies, the number of workers", STORED)
NUM_PS = column("num_ps", AXIS, "parameter_server: parameter server tasks", STORED)
OPTIMIZER = column("optimizer", AXIS, "sgd (momentum 0.9) | adam", STORED)
OP_TIME_COLLECTIVES_S = column("op_time_collectives_s", NUMBER, "s per traced step: collectives (tfscale.measures.opgroups; profile: true)", STORED)
OP_TIME_COPIES_S = column("op_time_copies_s", NUMBER, "s per traced step: copies, sends and receives between devices", STORED)
OP_TIME_ELEMENTWISE_S = column("op_time_elementwise_s", NUMBER, "s per traced step: elementwise ops, reductions, variable updates", STORED)
OP_TIME_INPUT_S = column("op_time_input_s", NUMBER, "s per traced step: input pipeline ops (iterators)", STORED)
OP_TIME_MATMUL_S = column("op_time_matmul_s", NUMBER, "s per traced step: matrix products and convolutions", STORED)
OP_TIME_OTHER_S = column("op_time_other_s", NUMBER, "s per traced step: other ops, and instants with no op running", STORED)
OP_WINDOW_S = column("op_window_s", NUMBER, "s per traced step: first op start to last op end; the op_time_* add up to it", STORED)
OVERLAP_FRACTION = column("overlap_fraction", NUMBER, "(compute + split - fused) / split clamped to [0, 1]; 1 = comm hidden", STORED)
OVERLAP_FRACTION_CI95_HIGH = column("overlap_fraction_ci95_high", NUMBER, "95 % CI of overlap_fraction_raw, bootstrap", STORED)
OVERLAP_FRACTION_CI95_LOW = column("overlap_fraction_ci95_low", NUMBER, "95 % CI of overlap_fraction_raw, bootstrap", STORED)
OVERLAP_FRACTION_RAW = column("overlap_fraction_raw", NUMBER, "the same before clamping", STORED)
OVERLAP_OUT_OF_RANGE = column("overlap_out_of_range", FLAG, "bool: the raw overlap fell outside [0, 1]", STORED)
PARALLELISM = column("parallelism", AXIS, "data|pipeline|tensor|hybrid", STORED)
PARAMS = column("params", COUNT, "count of model parameters (trainable and not)", STORED)
PARAM_BYTES_PER_DEVICE = column("param_bytes_per_device", COUNT, "bytes, parameters on the most loaded device", STORED)
PARTITIONER = column("partitioner", AXIS, "parameter_server: none|min_size|fixed_shards variable partitioner", STORED)
PEAK_FLOPS_METHOD = column("peak_flops_method", TEXT, "where peak_flops_per_s comes from (datasheet, microbenchmark, suite)", STORED)
PEAK_FLOPS_PER_S = column("peak_flops_per_s", AXIS, "FLOP/s of one device at the config's precision; CPU: per logical device", STORED)
PEAK_MEMORY_BYTES = column("peak_memory_bytes", NUMBER, "bytes per device, see memory_kind", STORED)
PEAK_MEMORY_DEVICE = column("peak_memory_device", TEXT, "whose peak_memory_bytes: the GPU of the task (\"GPU:1\") or \"process\"", STORED)
PORT_RETRIES = column("port_retries", COUNT, "cluster relaunches on fresh ports (a port taken before TF bound it; gRPC parse error)", STORED)
PRECISION = column("precision", AXIS, "float32|mixed_bfloat16|mixed_float16", STORED)
PREFETCH = column("prefetch", AXIS, "data files: batches prefetched, or auto (AUTOTUNE); 0: none", STORED)
PRICE_PER_DEVICE_HOUR = column("price_per_device_hour", AXIS, "the suite's price of one device for one hour (any currency)", STORED)
PROCESS_SPREAD_DF = column("process_spread_df", COUNT, "int, degrees of freedom of process_spread_sd_rel (processes - 1, summed over the run and its history)", STORED)
PROCESS_SPREAD_SD_REL = column("process_spread_sd_rel", NUMBER, "log-sd of process medians beyond noise, pooled over a run (repeats) and history_spread_sd_rel", STORED)
RANK_CPU_AFFINITY = column("rank_cpu_affinity", TEXTS, "list, each training rank's allowed CPUs (sched_getaffinity, as \"0-7,16\")", STORED)
RANK_GPU_UUIDS = column("rank_gpu_uuids", OBJECT, "list, each training rank's GPUs by NVML UUID (empty list on CPU)", STORED)
RANK_PEAK_MEMORY_BYTES = column("rank_peak_memory_bytes", NUMBERS, "list of bytes, peak_memory_bytes of each training rank", STORED)
RANK_STEP_TIME_MEDIAN_S = column("rank_step_time_median_s", NUMBERS, "list of s, each training rank's own median step time", STORED)
RANK_THROUGHPUT_EXAMPLES_PER_S = column("rank_throughput_examples_per_s", NUMBERS, "list, each rank's batch share / its median step", STORED)
REASON = column("reason", TEXT, "one line: why a config failed or timed out; empty when ok", STORED)
REPEAT = column("repeat", COUNT, "which fresh process of a config a stored line is (0 .. repeats - 1); empty once combined", STORED)
REPEATS = column("repeats", AXIS, "int, fresh worker processes the config ran in (the suite's repeats setting)", STORED)
REPEAT_MEDIANS_S = column("repeat_medians_s", NUMBERS, "list of s, each process's median step (repeats > 1), in repeat order", STORED)
REPEAT_SAMPLES = column("repeat_samples", NUMBERS, "list, each process's window count: step_times_s holds them one after another", STORED)
REPLICAS = column("replicas", COUNT, "data-parallel replicas (model copies) the strategy runs", STORED)
RUN_DRIFT_DF = column("run_drift_df", COUNT, "int, degrees of freedom of run_drift_sd_rel (its configs' earlier runs - 1, summed)", STORED)
RUN_DRIFT_RUNS = column("run_drift_runs", COUNT, "int, earlier runs of the suite on this host run_drift_sd_rel was estimated from", STORED)
RUN_DRIFT_SD_REL = column("run_drift_sd_rel", NUMBER, "log-sd of a config's median between runs on this host beyond their CIs (tfscale.stats.drift); empty without 2+ earlier runs", STORED)
RUN_ID = column("run_id", TEXT, "name of the run folder under results/<suite>/", STORED)
SAMPLES = column("samples", COUNT, "timing windows timed (the length of step_times_s)", STORED)
SCHEMA_VERSION = column("schema_version", COUNT, "int, version of this record layout (store.SCHEMA_VERSION)", STORED)
SEED = column("seed", AXIS, "int, seed of the synthetic data", STORED)
SHUFFLE_BUFFER = column("shuffle_buffer", AXIS, "data files: examples in the shuffle buffer; 0: no shuffle", STORED)
SLURM_JOB_ID = column("slurm_job_id", TEXT, "launcher slurm: the job (allocation) the config's step ran in", STORED)
SLURM_STEP_ID = column("slurm_step_id", TEXT, "launcher slurm: the config's job step in slurm_job_id (empty: never started)", STORED)
STAGES = column("stages", AXIS, "pipeline: contiguous layer groups, one per device", STORED)
STAGE_PARAM_BYTES = column("stage_param_bytes", NUMBERS, "pipeline: list of bytes, parameters of each stage", STORED)
STARTED_AT = column("started_at", TEXT, "ISO 8601 UTC time the parent started this config", STORED)
STATUS = column("status", TEXT, "ok|failed|timeout|skipped", STORED)
STEP_TIMES_S = column("step_times_s", NUMBERS, "list of s, the raw samples: one per timing window, per step", STORED)
STEP_TIME_CI95_HIGH_S = column("step_time_ci95_high_s", NUMBER, "s, upper end of the distribution-free 95 % CI of the median", STORED)
STEP_TIME_CI95_LOW_S = column("step_time_ci95_low_s", NUMBER, "s, lower end of that CI; both empty below 6 samples", STORED)
STEP_TIME_MAD_S = column("step_time_mad_s", NUMBER, "s, median absolute deviation from the median (unscaled)", STORED)
STEP_TIME_MEAN_S = column("step_time_mean_s", NUMBER, "s, arithmetic mean of the timed step samples", STORED)
STEP_TIME_MEDIAN_S = column("step_time_median_s", NUMBER, "s, median of the timed step samples", STORED)
STEP_TIME_P10_S = column("step_time_p10_s", NUMBER, "s, 10th percentile (linear interpolation)", STORED)
STEP_TIME_P90_S = column("step_time_p90_s", NUMBER, "s, 90th percentile (linear interpolation)", STORED)
STRAGGLER = column("straggler", FLAG, "bool: a rank's median step time is > 10 % above the median of the ranks' medians", STORED)
STRAGGLER_RANKS = column("straggler_ranks", NUMBERS, "list of rank indices flagged as stragglers", STORED)
STRATEGY = column("strategy", AXIS, "tf.distribute strategy registry name", STORED)
SUITE = column("suite", TEXT, "suite name", STORED)
TASK = column("task", AXIS, "random (random targets) | teacher (a fixed random teacher network labels fresh inputs)", STORED)
TELEMETRY_PATH = column("telemetry_path", TEXT, "CSV of the sampled series, relative to the run folder", STORED)
TELEMETRY_SAMPLES = column("telemetry_samples", COUNT, "host samples the summary used", STORED)
TELEMETRY_WINDOW = column("telemetry_window", TEXT, "which part of the run the telemetry summary covers, in words", STORED)
TENSOR_PARALLEL = column("tensor_parallel", AXIS, "tensor, hybrid: devices each sharded weight is split over", STORED)
TFSCALE_VERSION = column("tfscale_version", TEXT, "tfscale version that wrote the record", STORED)
TF_VERSION = column("tf_version", TEXT, "tensorflow version the worker ran", STORED)
THROUGHPUT_EXAMPLES_PER_S = column("throughput_examples_per_s", NUMBER, "examples/s, all replicas: global_batch_size / median step", STORED)
THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S = column("throughput_per_replica_examples_per_s", NUMBER, "examples/s, throughput / replicas", STORED)
TIMED_STEPS = column("timed_steps", COUNT, "steps inside the timed windows", STORED)
TIMING = column("timing", TEXT, "one sentence: how the step times were measured", STORED)
TOP_OPS = column("top_ops", TEXTS, "list of text: the traced step's top ops by self time, \"type name: ms per step\"", STORED)
TRACED_STEP_S = column("traced_step_s", NUMBER, "s, wall time per traced (profiled, untimed) step, a host sync after each", STORED)
TRACE_ERROR = column("trace_error", TEXT, "why a requested profiler trace is missing (the config itself still counts)", STORED)
TRACE_PATH = column("trace_path", TEXT, "folder of the profiler trace (open with: tensorboard --logdir <it>)", STORED)
TRACE_STEPS = column("trace_steps", COUNT, "extra, untimed steps run under the profiler", STORED)
WARMUP_STEPS = column("warmup_steps", AXIS, "untimed steps run before the timed ones (the first one is first_step_s)", STORED)
WARMUP_STOP = column("warmup_stop", TEXT, "why the warm-up ended: steady (no trend in the last 1 s) | max_warmup_s | fixed", STORED)
WINDOW_DRIFT_REL = column("window_drift_rel", NUMBER, "median of the last third of the timed windows / of the first third - 1", STORED)
WINDOW_STEPS = column("window_steps", AXIS, "steps per timing window (as set or calibrated); a sample is window time / window_steps", STORED)

# --- derived by tfscale.analysis (never stored) ---------------------------------------------------------------
ACHIEVED_FLOPS_PER_S = column("achieved_flops_per_s", NUMBER, "FLOP/s, flops_per_step / global_batch_size x throughput", DERIVED)
BASELINE_CONFIG_ID = column("baseline_config_id", TEXT, "config_id of the 1-device, 1-node baseline used", DERIVED)
BASELINE_NOTE = column("baseline_note", TEXT, "why speedup/efficiency are empty, when they are", DERIVED)
BUSBW_LINK_FRACTION = column("busbw_link_fraction", NUMBER, "busbw_bytes_per_s / link_bytes_per_s (simulated hosts)", DERIVED)
CHECK_LINK_FRACTION = column("check_link_fraction", NUMBER, "link_measured_bytes_per_s / link_bytes_per_s (simulated hosts)", DERIVED)
COMM_EXPOSED_FRACTION = column("comm_exposed_fraction", NUMBER, "loss breakdown: comm_exposed_s / step_time_median_s", DERIVED)
COMM_EXPOSED_NOTE = column("comm_exposed_note", TEXT, "loss breakdown: why comm_exposed_s is 0 (\"within noise\" and the CI)", DERIVED)
COMM_EXPOSED_S = column("comm_exposed_s", NUMBER, "s, loss breakdown: exposed communication (comm_time_exposed_s, else 0)", DERIVED)
COMM_FRACTION = column("comm_fraction", NUMBER, "comm_time_exposed_s / step_time_median_s", DERIVED)
COMM_VS_LOOPBACK = column("comm_vs_loopback", NUMBER, "comm_time_isolated_s on the shaped link / the same over loopback", DERIVED)
COMPUTE_GROWTH_FRACTION = column("compute_growth_fraction", NUMBER, "loss breakdown: compute_growth_s / step_time_median_s", DERIVED)
COMPUTE_GROWTH_S = column("compute_growth_s", NUMBER, "s, loss breakdown: compute-only step - ideal_step_s, where it was timed", DERIVED)
COST_PER_MILLION_EXAMPLES = column("cost_per_million_examples", NUMBER, "price_per_device_hour x devices / 3600 x 1e6 / throughput", DERIVED)
FILES_VS_SYNTHETIC = column("files_vs_synthetic", NUMBER, "throughput with data: files / the same config's with synthetic data", DERIVED)
GAP_CI95_HIGH_S = column("gap_ci95_high_s", NUMBER, "s, 95 % CI of gap_s (bootstrap of the config's and baseline's samples)", DERIVED)
GAP_CI95_LOW_S = column("gap_ci95_low_s", NUMBER, "s, 95 % CI of gap_s (bootstrap of the config's and baseline's samples)", DERIVED)
GAP_FRACTION = column("gap_fraction", NUMBER, "gap_s / step_time_median_s: the share of the step lost to scaling", DERIVED)
GAP_S = column("gap_s", NUMBER, "s, loss breakdown: measured median step - ideal_step_s", DERIVED)
GOODPUT_CI95_HIGH_EXAMPLES_PER_S = column("goodput_ci95_high_examples_per_s", NUMBER, "examples/s, 95 % CI of goodput", DERIVED)
GOODPUT_CI95_LOW_EXAMPLES_PER_S = column("goodput_ci95_low_examples_per_s", NUMBER, "examples/s, 95 % CI of goodput", DERIVED)
GOODPUT_EXAMPLES_PER_S = column("goodput_examples_per_s", NUMBER, "examples/s, throughput x statistical_efficiency", DERIVED)
GOODPUT_SCALING_EFFICIENCY = column("goodput_scaling_efficiency", NUMBER, "goodput_N / (N x the baseline's goodput)", DERIVED)
IDEAL_STEP_S = column("ideal_step_s", NUMBER, "s, the step at perfect scaling: T1/N (strong) or T1 (weak)", DERIVED)
INPUT_WAIT_FRACTION = column("input_wait_fraction", NUMBER, "loss breakdown: input_wait_s / step_time_median_s", DERIVED)
INPUT_WAIT_S = column("input_wait_s", NUMBER, "s, loss breakdown: input_wait_time_s (0 within noise; 0 with synthetic in-memory data)", DERIVED)
JOULES_PER_EXAMPLE = column("joules_per_example", NUMBER, "J, energy_j / (energy_window_s x throughput)", DERIVED)
LAYOUT = column("layout", TEXT, "how a config spreads its devices, e.g. \"2 nodes × 1\", \"2 workers + 1 PS\" (tfscale.labels)", DERIVED)
MFU = column("mfu", NUMBER, "achieved_flops_per_s / (devices x peak_flops_per_s): model FLOPs utilisation, 0..1", DERIVED)
MODE = column("mode", TEXT, "how a config uses its devices, e.g. \"data (mirrored)\", \"pipeline 2 stages x 4 micro-batches\"", DERIVED)
NOISE_SCALE_USED = column("noise_scale_used", NUMBER, "examples, the B_noise statistical_efficiency used, and whose", DERIVED)
REST_FRACTION = column("rest_fraction", NUMBER, "loss breakdown: rest_s / step_time_median_s", DERIVED)
REST_S = column("rest_s", NUMBER, "s, loss breakdown: gap_s minus the other terms (overheads; compute growth where not timed)", DERIVED)
SCALING = column("scaling", TEXT, "strong|weak: which definition scaling_efficiency uses", DERIVED)
SCALING_EFFICIENCY = column("scaling_efficiency", NUMBER, "strong: T1/(N*TN) in step time; weak: thr_N/(N*thr_1)", DERIVED)
SCALING_EFFICIENCY_CI95_HIGH = column("scaling_efficiency_ci95_high", NUMBER, "95 % CI of scaling_efficiency (bootstrap)", DERIVED)
SCALING_EFFICIENCY_CI95_LOW = column("scaling_efficiency_ci95_low", NUMBER, "95 % CI of scaling_efficiency (bootstrap)", DERIVED)
SPEEDUP = column("speedup", NUMBER, "strong: T1/TN; weak: thr_N/thr_1", DERIVED)
SPEEDUP_CI95_HIGH = column("speedup_ci95_high", NUMBER, "95 % CI of speedup (bootstrap of the config's and baseline's samples)", DERIVED)
SPEEDUP_CI95_LOW = column("speedup_ci95_low", NUMBER, "95 % CI of speedup (bootstrap of the config's and baseline's samples)", DERIVED)
STATISTICAL_EFFICIENCY = column("statistical_efficiency", NUMBER, "(B_noise + B0) / (B_noise + B): learning per example vs B0", DERIVED)
STATISTICAL_EFFICIENCY_CI95_HIGH = column("statistical_efficiency_ci95_high", NUMBER, "95 % CI, from grad_noise_scale's", DERIVED)
STATISTICAL_EFFICIENCY_CI95_LOW = column("statistical_efficiency_ci95_low", NUMBER, "95 % CI, from grad_noise_scale's", DERIVED)
STEP_TIME_CV = column("step_time_cv", NUMBER, "MAD / median, a robust coefficient of variation", DERIVED)
STRAGGLER_WAIT_FRACTION = column("straggler_wait_fraction", NUMBER, "loss breakdown: straggler_wait_s / step_time_median_s", DERIVED)
STRAGGLER_WAIT_S = column("straggler_wait_s", NUMBER, "s, loss breakdown: slowest rank's median step - median of the ranks'", DERIVED)
SYNTHETIC_SCALING_EFFICIENCY = column("synthetic_scaling_efficiency", NUMBER, "input section: the data: synthetic twin's efficiency", DERIVED)
SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S = column("synthetic_throughput_examples_per_s", NUMBER, "examples/s of the synthetic twin", DERIVED)

# --- tfscale predict's table (and the report's prediction section), not a column of records ------------------
ALPHA_S = column("alpha_s", NUMBER, "s, fitted latency term of the all-reduce model (compute + alpha + beta x bytes x 2(N-1)/N)", PREDICT)
BETA_S_PER_BYTE = column("beta_s_per_byte", NUMBER, "s/byte, fitted inverse-bandwidth term of that model", PREDICT)
FITTED_ON = column("fitted_on", NUMBERS, "list, the multi-device counts the model was fitted on (with the 1-device baseline)", PREDICT)
INSIDE_INTERVAL = column("inside_interval", FLAG, "hold-out: bool, the measured step inside the prediction's 95 % interval", PREDICT)
MEASURED_STEP_S = column("measured_step_s", NUMBER, "s, hold-out: the held-out count's measured median step", PREDICT)
PREDICTED_EFFICIENCY = column("predicted_efficiency", NUMBER, "modelled scaling efficiency at a device count, 0..1", PREDICT)
PREDICTED_EFFICIENCY_CI95_HIGH = column("predicted_efficiency_ci95_high", NUMBER, "95 % interval (bootstrap of the fit's samples)", PREDICT)
PREDICTED_EFFICIENCY_CI95_LOW = column("predicted_efficiency_ci95_low", NUMBER, "95 % interval (bootstrap of the fit's samples)", PREDICT)
PREDICTED_STEP_CI95_HIGH_S = column("predicted_step_ci95_high_s", NUMBER, "s, 95 % interval (bootstrap); empty without samples", PREDICT)
PREDICTED_STEP_CI95_LOW_S = column("predicted_step_ci95_low_s", NUMBER, "s, 95 % interval (bootstrap); empty without samples", PREDICT)
PREDICTED_STEP_S = column("predicted_step_s", NUMBER, "s, modelled step time at a device count", PREDICT)
PREDICTED_THROUGHPUT_EXAMPLES_PER_S = column("predicted_throughput_examples_per_s", NUMBER, "examples/s, global batch / step", PREDICT)
PREDICTION_ERROR = column("prediction_error", NUMBER, "hold-out: predicted_step_s / measured_step_s - 1", PREDICT)
PREDICTION_WARNINGS = column("prediction_warnings", TEXT, "why a prediction deserves less trust, \"; \"-joined; empty: none", PREDICT)

# --- the report's layout table (tfscale.analysis.layout_comparison), not a column of records ----------------
RANK_THROUGHPUT_MAX_EXAMPLES_PER_S = column("rank_throughput_max_examples_per_s", NUMBER, "examples/s, the fastest rank's", LAYOUT_TABLE)
RANK_THROUGHPUT_MIN_EXAMPLES_PER_S = column("rank_throughput_min_examples_per_s", NUMBER, "examples/s, the slowest rank's", LAYOUT_TABLE)

# fmt: on

# Derived and table columns renamed, old -> new, by the tfscale version that renamed them (stored columns:
# store.RENAMED, with their record migration). docs/records.md lists both.
DERIVED_RENAMED = {
    "0.4.0": {
        "goodput": GOODPUT_EXAMPLES_PER_S,
        "goodput_ci95_high": GOODPUT_CI95_HIGH_EXAMPLES_PER_S,
        "goodput_ci95_low": GOODPUT_CI95_LOW_EXAMPLES_PER_S,
        "error": PREDICTION_ERROR,
        "predicted_throughput": PREDICTED_THROUGHPUT_EXAMPLES_PER_S,
        "warnings": PREDICTION_WARNINGS,
        "rank_throughput_max": RANK_THROUGHPUT_MAX_EXAMPLES_PER_S,
        "rank_throughput_min": RANK_THROUGHPUT_MIN_EXAMPLES_PER_S,
    }
}

# Columns every record carries, in the order load_results gives them: who and what, then the config's axes and
# the settings that say how its samples were taken (named as in the suite: tfscale.axes), then what was measured.
RECORD_COLUMNS = (
    CONFIG_ID, SUITE, RUN_ID, STATUS, REASON, DEVICE,
    *AXES,
    *(name for name, setting in SETTINGS.items() if setting.recorded),
    LINK_BYTES_PER_S, LINK_MEASURED_BYTES_PER_S, LINK_CHECK_METHOD, LINK_NCCL_SETTINGS, DEVICES, REPLICAS,
    DEVICE_KIND, GLOBAL_BATCH_SIZE, PARAMS, GRAD_BYTES, TIMED_STEPS, FIRST_STEP_S, STEP_TIME_MEDIAN_S,
    STEP_TIME_MEAN_S, STEP_TIME_P10_S, STEP_TIME_P90_S, STEP_TIME_MAD_S, STEP_TIME_CI95_LOW_S,
    STEP_TIME_CI95_HIGH_S, CI_TARGET, CI_MET, CI_HALF_WIDTH_REL, CI_COVERS, SAMPLES, WINDOW_DRIFT_REL, REPEAT,
    REPEAT_MEDIANS_S, REPEAT_SAMPLES, PROCESS_SPREAD_SD_REL, PROCESS_SPREAD_DF, HISTORY_SPREAD_SD_REL,
    HISTORY_SPREAD_DF, HISTORY_SPREAD_RUNS, RUN_DRIFT_SD_REL, RUN_DRIFT_DF, RUN_DRIFT_RUNS, WARMUP_STOP, MEASURE_STOP,
    THROUGHPUT_EXAMPLES_PER_S, THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S, FLOPS_PER_STEP, FLOPS_PER_REPLICA_STEP,
    FLOPS_METHOD, PEAK_FLOPS_PER_S, PEAK_FLOPS_METHOD, ENERGY_J, ENERGY_WINDOW_S, ENERGY_METHOD, PEAK_MEMORY_BYTES,
    MEMORY_KIND, PEAK_MEMORY_DEVICE, HOST_RSS_PEAK_BYTES, RANK_THROUGHPUT_EXAMPLES_PER_S, RANK_STEP_TIME_MEDIAN_S,
    RANK_PEAK_MEMORY_BYTES, RANK_CPU_AFFINITY, RANK_GPU_UUIDS, STRAGGLER, STRAGGLER_RANKS, LAUNCHER, SLURM_JOB_ID,
    SLURM_STEP_ID, CLUSTER, PORT_RETRIES, COLLECTIVE_IMPLEMENTATION, DATA_SOURCE, DATA_CACHE_PATH, DATA_CACHE_BYTES,
    DATA_GENERATION_S, INPUT_PIPELINE, INPUT_THROUGHPUT_EXAMPLES_PER_S, INPUT_HEADROOM, INPUT_WAIT_TIME_S,
    INPUT_WAIT_TIME_CI95_LOW_S, INPUT_WAIT_TIME_CI95_HIGH_S, INPUT_MEMORY_TIMES_S, INPUT_BOUND, INPUT_BOUND_NOTE,
    INPUT_WAIT_METHOD, GRAD_NOISE_SCALE, GRAD_NOISE_SCALE_CI95_LOW, GRAD_NOISE_SCALE_CI95_HIGH, GRAD_NOISE_METHOD,
    COMPUTE_TIME_S, COMPUTE_TIMES_S, COMM_TIME_EXPOSED_S, COMM_TIME_EXPOSED_CI95_LOW_S,
    COMM_TIME_EXPOSED_CI95_HIGH_S, COMM_TIME_SPLIT_S, COMM_TIME_ISOLATED_S, COMM_TIME_MODEL_S, COMM_TIME_TRACE_S,
    COMM_TIME_PULL_S, COMM_TIME_PUSH_S, TRACE_PATH, TRACE_STEPS, TRACE_ERROR, TRACED_STEP_S, OP_WINDOW_S,
    OP_TIME_MATMUL_S, OP_TIME_ELEMENTWISE_S, OP_TIME_COLLECTIVES_S, OP_TIME_INPUT_S, OP_TIME_COPIES_S,
    OP_TIME_OTHER_S, TOP_OPS, PARAM_BYTES_PER_DEVICE, STAGE_PARAM_BYTES, BUBBLE_FRACTION, BUBBLE_FRACTION_THEORY,
    MODEL_PARALLEL_METHOD, ALGBW_BYTES_PER_S, BUSBW_BYTES_PER_S, BUSBW_CI95_LOW_BYTES_PER_S,
    BUSBW_CI95_HIGH_BYTES_PER_S, OVERLAP_FRACTION, OVERLAP_FRACTION_RAW, OVERLAP_FRACTION_CI95_LOW,
    OVERLAP_FRACTION_CI95_HIGH, OVERLAP_OUT_OF_RANGE, COMM_METHOD, HOST_CPU_UTIL_MEAN_PCT, NET_BYTES_PER_S,
    GPU_UTIL_MEAN_PCT, GPU_MEM_PEAK_BYTES, GPU_POWER_MEAN_W, GPU_TELEMETRY_NOTE, TELEMETRY_SAMPLES,
    TELEMETRY_WINDOW, TELEMETRY_PATH, FINAL_LOSS, STEP_TIMES_S, TIMING, HOST, TF_VERSION, TFSCALE_VERSION,
    STARTED_AT, FINISHED_AT, DURATION_S, LOG_PATH, LOG_TAIL, SCHEMA_VERSION,
)  # fmt: skip

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_TIMEOUT = "timeout"
STATUS_SKIPPED = "skipped"  # not run: the machine cannot (e.g. simulated networking without root); see reason

# memory_kind's values: TF's allocator peak of one GPU (after the reset at the end of warm-up), or the process's
MEMORY_KIND_ALLOCATOR_PEAK = "tf_allocator_peak_per_device"
MEMORY_KIND_PROCESS_RSS = "process_peak_rss"
# ... or that of a worker forked by the zygote (launch.zygote): TensorFlow's pages it shares with the zygote count
# only where it touched them, ~320 MiB below a fresh process's here (tests/benchmarks/bench_worker_fork.py)
MEMORY_KIND_FORKED_RSS = "forked_process_peak_rss"
