"""Every record column name in one place, alphabetised, with its unit (docs/records.md is generated from here).

Users' scripts read these names from records and DataFrames: add new ones; a stored name changes only with a new
store.SCHEMA_VERSION whose update_to_N renames it in old records (store.RENAMED lists every rename, and
docs/records.md shows it). Units are in the names: `_s`, `_bytes`, `_per_s` (`_examples_per_s` on every throughput),
`_w`, `_j`, `_pct` for 0-100; a bare fraction or efficiency is 0-1. The analysis adds the derived columns in the second
block; they are never stored in records.
"""

from tfscale.axes import AXES, SETTINGS

# --- stored in every record (records.jsonl) -------------------------------------------------------------------
ALGBW_BYTES_PER_S = "algbw_bytes_per_s"  # bytes/s, grad_bytes / comm_time_isolated_s (nccl-tests algbw)
BATCH_POLICY = "batch_policy"  # "weak": batch_size per replica; "strong": batch_size is the global batch
BATCH_SIZE = "batch_size"  # examples, as written in the suite (see batch_policy)
BUBBLE_FRACTION = "bubble_fraction"  # pipeline: measured idle share, 1 - sum(stage busy) / (stages x step)
BUBBLE_FRACTION_THEORY = "bubble_fraction_theory"  # pipeline: GPipe idle share (S-1)/(M+S-1)
BUSBW_BYTES_PER_S = "busbw_bytes_per_s"  # bytes/s, algbw x 2(n-1)/n with n replicas (nccl-tests busbw)
BUSBW_CI95_HIGH_BYTES_PER_S = "busbw_ci95_high_bytes_per_s"  # bytes/s, busbw at the CI's low all-reduce time
BUSBW_CI95_LOW_BYTES_PER_S = "busbw_ci95_low_bytes_per_s"  # bytes/s, busbw at the CI's high all-reduce time
BYTES_PER_PACK = "bytes_per_pack"  # multi_worker_mirrored: CommunicationOptions.bytes_per_pack; 0 = TF's choice
CACHE = "cache"  # data files: bool, tf.data cache of the decoded examples after the first epoch
CI_COVERS = "ci_covers"  # what spread the step time's CI covers: within one process | between repeats processes
CI_HALF_WIDTH_REL = "ci_half_width_rel"  # larger side of the median step's 95 % CI / median; empty below 6 samples
CI_MET = "ci_met"  # bool: ci_half_width_rel <= ci_target
CI_TARGET = "ci_target"  # the target_ci the config was measured to (fraction of the median, e.g. 0.02)
CLUSTER = "cluster"  # cluster strategies: task counts per TF job, e.g. {"chief": 1, "worker": 2, "ps": 1}
COLLECTIVE = "collective"  # multi_worker_mirrored: all-reduce implementation auto|ring|nccl
COLLECTIVE_IMPLEMENTATION = "collective_implementation"  # multi_worker_mirrored: all-reduce TF ran: RING|NCCL
COMM_METHOD = "comm_method"  # how the communication figures were measured, in words
COMM_TIME_EXPOSED_CI95_HIGH_S = "comm_time_exposed_ci95_high_s"  # s, 95 % CI of comm_time_exposed_s (bootstrap)
COMM_TIME_EXPOSED_CI95_LOW_S = "comm_time_exposed_ci95_low_s"  # s, 95 % CI of comm_time_exposed_s (bootstrap)
COMM_TIME_EXPOSED_S = "comm_time_exposed_s"  # s, median fused step - median compute-only step
COMM_TIME_ISOLATED_S = "comm_time_isolated_s"  # s, median all-reduce alone of tensors shaped like the gradients
COMM_TIME_MODEL_S = "comm_time_model_s"  # s, alpha-beta fit of the commbench sweep evaluated at grad_bytes
COMM_TIME_PULL_S = "comm_time_pull_s"  # s, parameter_server: median round of every worker reading all variables
COMM_TIME_PUSH_S = "comm_time_push_s"  # s, parameter_server: median round of every worker applying an update
COMM_TIME_SPLIT_S = "comm_time_split_s"  # s, median all-reduce + optimizer update of computed gradients
COMM_TIME_TRACE_S = "comm_time_trace_s"  # s per step, union of collective-op intervals in the profiler trace
COMPUTE_TIMES_S = "compute_times_s"  # list of s, the compute-only step's samples (one per window, per step)
COMPUTE_TIME_S = "compute_time_s"  # s, median step computing per-replica gradients only (no communication)
CONFIG_ID = "config_id"  # 12 hex digits: hash of the normalised config axes (plan.config_id)
CROSS_DEVICE_OPS = "cross_device_ops"  # mirrored: nccl|hierarchical_copy|reduction_to_one_device; empty: TF's default
DATA = "data"  # synthetic (one in-memory batch repeated) | files (TFRecord files through tf.data)
DATA_CACHE_BYTES = "data_cache_bytes"  # bytes, the dataset files on disk (data files)
DATA_CACHE_PATH = "data_cache_path"  # folder of the dataset files, in the tfscale cache (data files)
DATA_COMPRESSION = "data_compression"  # data files: none|gzip|zlib, the TFRecord compression
DATA_EXAMPLES = "data_examples"  # data files: examples written to the dataset files
DATA_GENERATION_S = "data_generation_s"  # s, writing the dataset files; 0 when an earlier run's files were reused
DATA_PARALLEL_CALLS = "data_parallel_calls"  # data files: parallel calls of the maps, or auto (AUTOTUNE)
DATA_SHARDS = "data_shards"  # data files: TFRecord files the examples are split into
DATA_SOURCE = "data_source"  # what the step read: synthetic in-memory batch | tfrecord files | user dataset_fn
DEVICE = "device"  # cpu|gpu, the suite's device
DEVICES = "devices"  # nodes * devices_per_node: the N of scaling efficiency
DEVICES_PER_NODE = "devices_per_node"  # accelerators (or logical CPU devices) per node
DEVICE_KIND = "device_kind"  # cpu-logical|gpu|gpu-logical
DURATION_S = "duration_s"  # s, wall time of the config's processes seen by the parent (to the launcher's 0.1 s poll)
ENERGY_J = "energy_j"  # J over the timed windows (energy_window_s): GPU or CPU package counters, see energy_method
ENERGY_METHOD = "energy_method"  # which counters energy_j read (tfscale.worker.energy), or why it is empty
ENERGY_WINDOW_S = "energy_window_s"  # s, wall time between the two counter readings around the timed windows
FINAL_LOSS = "final_loss"  # loss of the last timed step: a check that training ran (not a quality figure)
FINISHED_AT = "finished_at"  # ISO 8601 UTC time the parent finished this config
FIRST_STEP_S = "first_step_s"  # s, first step with tracing / XLA compile, synced (grad_noise_every > 1: probed + plain)
FLOPS_METHOD = "flops_method"  # how flops_per_step was counted (tfscale.flops), or why it is empty
FLOPS_PER_REPLICA_STEP = "flops_per_replica_step"  # FLOPs of one replica's forward + backward on its batch share
FLOPS_PER_STEP = "flops_per_step"  # FLOPs of one training step over all replicas (matrix products, convolutions)
GLOBAL_BATCH_SIZE = "global_batch_size"  # examples per step over all replicas
GPU_MEM_PEAK_BYTES = "gpu_mem_peak_bytes"  # bytes, highest NVML memory used on any GPU while sampled
GPU_POWER_MEAN_W = "gpu_power_mean_w"  # W, mean NVML power draw per GPU sample
GPU_TELEMETRY_NOTE = "gpu_telemetry_note"  # why the GPU telemetry columns are empty (no NVML, no GPU)
GPU_UTIL_MEAN_PCT = "gpu_util_mean_pct"  # %, mean NVML utilisation over the GPU samples
GRAD_BYTES = "grad_bytes"  # bytes of one full set of gradients (trainable variables' sizes x dtype sizes)
GRAD_NOISE_METHOD = "grad_noise_method"  # how grad_noise_scale was estimated, in words
GRAD_NOISE_SCALE = "grad_noise_scale"  # examples, B_simple = tr(Sigma)/|G|^2 of the probed steps; empty if |G|^2 <= 0
GRAD_NOISE_SCALE_CI95_HIGH = "grad_noise_scale_ci95_high"  # examples, 95 % CI; empty with the low end set: unbounded
GRAD_NOISE_SCALE_CI95_LOW = "grad_noise_scale_ci95_low"  # examples, 95 % CI (Fieller), empty below 8 windows
HOST = "host"  # host name the worker ran on
HOST_CPU_UTIL_MEAN_PCT = "host_cpu_util_mean_pct"  # %, mean system-wide CPU use (psutil) over the samples
HOST_RSS_PEAK_BYTES = "host_rss_peak_bytes"  # bytes, worker process peak resident set (VmHWM)
INPUT_BOUND = "input_bound"  # bool, data files: input_wait_time_s > 10 % of the step and its CI above 0
INPUT_BOUND_NOTE = "input_bound_note"  # the figures that decided input_bound, one sentence
INPUT_HEADROOM = "input_headroom"  # input_throughput_examples_per_s / throughput: above 1 the pipeline outruns the step
INPUT_MEMORY_TIMES_S = "input_memory_times_s"  # list of s per step, the step fed one pipeline batch held in memory
INPUT_PIPELINE = "input_pipeline"  # the tf.data pipeline the config read, in words (settings included)
INPUT_THROUGHPUT_EXAMPLES_PER_S = "input_throughput_examples_per_s"  # examples/s, the pipeline alone, all workers
INPUT_WAIT_METHOD = "input_wait_method"  # how input_wait_time_s was measured, in words
INPUT_WAIT_TIME_CI95_HIGH_S = "input_wait_time_ci95_high_s"  # s, 95 % CI of input_wait_time_s (bootstrap)
INPUT_WAIT_TIME_CI95_LOW_S = "input_wait_time_ci95_low_s"  # s, 95 % CI of input_wait_time_s (bootstrap)
INPUT_WAIT_TIME_S = "input_wait_time_s"  # s per step, median step - median step on an in-memory batch (data files)
JIT = "jit"  # bool, XLA compilation of the per-replica gradient computation
LAUNCHER = "launcher"  # how the processes were started: local|slurm
LINK_BYTES_PER_S = "link_bytes_per_s"  # bytes/s, simulated hosts: configured rate of each node's link, per direction
LINK_CHECK_METHOD = "link_check_method"  # how link_measured_bytes_per_s was measured, in words
LINK_MEASURED_BYTES_PER_S = "link_measured_bytes_per_s"  # bytes/s, TCP goodput node 0 -> node 1 before the config
LINK_NCCL_SETTINGS = "link_nccl_settings"  # simulated hosts on GPUs: the NCCL environment that keeps NCCL on the link
LOG_PATH = "log_path"  # path of this config's log file, relative to the run folder
LOG_TAIL = "log_tail"  # last lines of the log of a failed config; empty when ok
MAX_MEASURE_S = "max_measure_s"  # s, run setting: most seconds of timed windows per config (steps: auto)
MAX_WARMUP_S = "max_warmup_s"  # s, run setting: most seconds of warm-up windows (warmup_steps: auto)
MEASURE_STOP = "measure_stop"  # why the timed windows stopped: target_ci met | max_measure_s spent | fixed steps
MEMORY_KIND = "memory_kind"  # what peak_memory_bytes measures: tf_allocator_peak_per_device|process_peak_rss
MICRO_BATCHES = "micro_batches"  # pipeline: micro-batches per step
MIN_WINDOW_S = "min_window_s"  # s, run setting: shortest timing window when window_steps is auto
MODEL = "model"  # zoo name (mlp|cnn|transformer) or a suite's user model name
MODEL_PARALLEL_METHOD = "model_parallel_method"  # how the model was split and the bubble measured, in words
MODEL_SIZE = "model_size"  # zoo size knob tiny|small|medium|large; empty for user models
NETWORK_LINK = "network_link"  # simulated hosts: link rate as written (tc syntax, e.g. 1gbit); empty: loopback
NET_BYTES_PER_S = "net_bytes_per_s"  # bytes/s, host network bytes sent + received (all interfaces) over the samples
NODES = "nodes"  # number of nodes (hosts); for cluster strategies, the number of workers
NUM_PS = "num_ps"  # parameter_server: parameter server tasks
OPTIMIZER = "optimizer"  # sgd (momentum 0.9) | adam
OP_TIME_COLLECTIVES_S = "op_time_collectives_s"  # s per traced step: collectives (tfscale.opgroups; profile: true)
OP_TIME_COPIES_S = "op_time_copies_s"  # s per traced step: copies, sends and receives between devices
OP_TIME_ELEMENTWISE_S = "op_time_elementwise_s"  # s per traced step: elementwise ops, reductions, variable updates
OP_TIME_INPUT_S = "op_time_input_s"  # s per traced step: input pipeline ops (iterators)
OP_TIME_MATMUL_S = "op_time_matmul_s"  # s per traced step: matrix products and convolutions
OP_TIME_OTHER_S = "op_time_other_s"  # s per traced step: other ops, and instants with no op running
OP_WINDOW_S = "op_window_s"  # s per traced step: first op start to last op end; the op_time_* add up to it
OVERLAP_FRACTION = "overlap_fraction"  # (compute + split - fused) / split clamped to [0, 1]; 1 = comm hidden
OVERLAP_FRACTION_CI95_HIGH = "overlap_fraction_ci95_high"  # 95 % CI of overlap_fraction_raw, bootstrap
OVERLAP_FRACTION_CI95_LOW = "overlap_fraction_ci95_low"  # 95 % CI of overlap_fraction_raw, bootstrap
OVERLAP_FRACTION_RAW = "overlap_fraction_raw"  # the same before clamping
OVERLAP_OUT_OF_RANGE = "overlap_out_of_range"  # bool: the raw overlap fell outside [0, 1]
PARALLELISM = "parallelism"  # data|pipeline|tensor|hybrid
PARAMS = "params"  # count of model parameters (trainable and not)
PARAM_BYTES_PER_DEVICE = "param_bytes_per_device"  # bytes, parameters on the most loaded device
PARTITIONER = "partitioner"  # parameter_server: none|min_size|fixed_shards variable partitioner
PEAK_FLOPS_METHOD = "peak_flops_method"  # where peak_flops_per_s comes from (datasheet, microbenchmark, suite)
PEAK_FLOPS_PER_S = "peak_flops_per_s"  # FLOP/s of one device at the config's precision; CPU: per logical device
PEAK_MEMORY_BYTES = "peak_memory_bytes"  # bytes per device, see memory_kind
PEAK_MEMORY_DEVICE = "peak_memory_device"  # whose peak_memory_bytes: the GPU of the task ("GPU:1") or "process"
PORT_RETRIES = "port_retries"  # cluster relaunches on fresh ports (a port taken before TF bound it; gRPC parse error)
PRECISION = "precision"  # float32|mixed_bfloat16|mixed_float16
PREFETCH = "prefetch"  # data files: batches prefetched, or auto (AUTOTUNE); 0: none
PRICE_PER_DEVICE_HOUR = "price_per_device_hour"  # the suite's price of one device for one hour (any currency)
PROCESS_SPREAD_DF = "process_spread_df"  # int, degrees of freedom of process_spread_sd_rel (processes - 1, summed)
PROCESS_SPREAD_SD_REL = "process_spread_sd_rel"  # log-sd of process medians beyond noise, pooled over a run (repeats)
RANK_CPU_AFFINITY = "rank_cpu_affinity"  # list, each training rank's allowed CPUs (sched_getaffinity, as "0-7,16")
RANK_GPU_UUIDS = "rank_gpu_uuids"  # list, each training rank's GPUs by NVML UUID (empty list on CPU)
RANK_PEAK_MEMORY_BYTES = "rank_peak_memory_bytes"  # list of bytes, peak_memory_bytes of each training rank
RANK_STEP_TIME_MEDIAN_S = "rank_step_time_median_s"  # list of s, each training rank's own median step time
RANK_THROUGHPUT_EXAMPLES_PER_S = "rank_throughput_examples_per_s"  # list, each rank's batch share / its median step
REASON = "reason"  # one line: why a config failed or timed out; empty when ok
REPEAT = "repeat"  # which fresh process of a config a stored line is (0 .. repeats - 1); empty once combined
REPEATS = "repeats"  # int, fresh worker processes the config ran in (the suite's repeats setting)
REPEAT_MEDIANS_S = "repeat_medians_s"  # list of s, each process's median step (repeats > 1), in repeat order
REPEAT_SAMPLES = "repeat_samples"  # list, each process's window count: step_times_s holds them one after another
REPLICAS = "replicas"  # data-parallel replicas (model copies) the strategy runs
RUN_ID = "run_id"  # name of the run folder under results/<suite>/
SAMPLES = "samples"  # timing windows timed (the length of step_times_s)
SCHEMA_VERSION = "schema_version"  # int, version of this record layout (store.SCHEMA_VERSION)
SEED = "seed"  # int, seed of the synthetic data
SHUFFLE_BUFFER = "shuffle_buffer"  # data files: examples in the shuffle buffer; 0: no shuffle
SLURM_JOB_ID = "slurm_job_id"  # launcher slurm: the job (allocation) the config's step ran in
SLURM_STEP_ID = "slurm_step_id"  # launcher slurm: the config's job step in slurm_job_id (empty: never started)
STAGES = "stages"  # pipeline: contiguous layer groups, one per device
STAGE_PARAM_BYTES = "stage_param_bytes"  # pipeline: list of bytes, parameters of each stage
STARTED_AT = "started_at"  # ISO 8601 UTC time the parent started this config
STATUS = "status"  # ok|failed|timeout|skipped
STEP_TIMES_S = "step_times_s"  # list of s, the raw samples: one per timing window, per step
STEP_TIME_CI95_HIGH_S = "step_time_ci95_high_s"  # s, upper end of the distribution-free 95 % CI of the median
STEP_TIME_CI95_LOW_S = "step_time_ci95_low_s"  # s, lower end of that CI; both empty below 6 samples
STEP_TIME_MAD_S = "step_time_mad_s"  # s, median absolute deviation from the median (unscaled)
STEP_TIME_MEAN_S = "step_time_mean_s"  # s, arithmetic mean of the timed step samples
STEP_TIME_MEDIAN_S = "step_time_median_s"  # s, median of the timed step samples
STEP_TIME_P10_S = "step_time_p10_s"  # s, 10th percentile (linear interpolation)
STEP_TIME_P90_S = "step_time_p90_s"  # s, 90th percentile (linear interpolation)
STRAGGLER = "straggler"  # bool: a rank's median step time is > 10 % above the median of the ranks' medians
STRAGGLER_RANKS = "straggler_ranks"  # list of rank indices flagged as stragglers
STRATEGY = "strategy"  # tf.distribute strategy registry name
SUITE = "suite"  # suite name
TASK = "task"  # random (random targets) | teacher (a fixed random teacher network labels fresh inputs)
TELEMETRY_PATH = "telemetry_path"  # CSV of the sampled series, relative to the run folder
TELEMETRY_SAMPLES = "telemetry_samples"  # host samples the summary used
TELEMETRY_WINDOW = "telemetry_window"  # which part of the run the telemetry summary covers, in words
TENSOR_PARALLEL = "tensor_parallel"  # tensor, hybrid: devices each sharded weight is split over
TFSCALE_VERSION = "tfscale_version"  # tfscale version that wrote the record
TF_VERSION = "tf_version"  # tensorflow version the worker ran
THROUGHPUT_EXAMPLES_PER_S = "throughput_examples_per_s"  # examples/s, all replicas: global_batch_size / median step
THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S = "throughput_per_replica_examples_per_s"  # examples/s, throughput / replicas
TIMED_STEPS = "timed_steps"  # steps inside the timed windows
TIMING = "timing"  # one sentence: how the step times were measured
TOP_OPS = "top_ops"  # list of text: the traced step's top ops by self time, "type name: ms per step"
TRACED_STEP_S = "traced_step_s"  # s, wall time per traced (profiled, untimed) step, a host sync after each
TRACE_ERROR = "trace_error"  # why a requested profiler trace is missing (the config itself still counts)
TRACE_PATH = "trace_path"  # folder of the profiler trace (open with: tensorboard --logdir <it>)
TRACE_STEPS = "trace_steps"  # extra, untimed steps run under the profiler
WARMUP_STEPS = "warmup_steps"  # untimed steps run before the timed ones (the first one is first_step_s)
WARMUP_STOP = "warmup_stop"  # why the warm-up ended: steady (no trend in the last 1 s) | max_warmup_s | fixed
WINDOW_DRIFT_REL = "window_drift_rel"  # median of the last third of the timed windows / of the first third - 1
WINDOW_STEPS = "window_steps"  # steps per timing window (as set or calibrated); a sample is window time / window_steps

# --- derived by tfscale.analysis (never stored) ---------------------------------------------------------------
ACHIEVED_FLOPS_PER_S = "achieved_flops_per_s"  # FLOP/s, flops_per_step / global_batch_size x throughput
BASELINE_CONFIG_ID = "baseline_config_id"  # config_id of the 1-device, 1-node baseline used
BASELINE_NOTE = "baseline_note"  # why speedup/efficiency are empty, when they are
BUSBW_LINK_FRACTION = "busbw_link_fraction"  # busbw_bytes_per_s / link_bytes_per_s (simulated hosts)
CHECK_LINK_FRACTION = "check_link_fraction"  # link_measured_bytes_per_s / link_bytes_per_s (simulated hosts)
COMM_EXPOSED_FRACTION = "comm_exposed_fraction"  # loss breakdown: comm_exposed_s / step_time_median_s
COMM_EXPOSED_NOTE = "comm_exposed_note"  # loss breakdown: why comm_exposed_s is 0 ("within noise" and the CI)
COMM_EXPOSED_S = "comm_exposed_s"  # s, loss breakdown: exposed communication (comm_time_exposed_s, else 0)
COMM_FRACTION = "comm_fraction"  # comm_time_exposed_s / step_time_median_s
COMM_VS_LOOPBACK = "comm_vs_loopback"  # comm_time_isolated_s on the shaped link / the same over loopback
COMPUTE_GROWTH_FRACTION = "compute_growth_fraction"  # loss breakdown: compute_growth_s / step_time_median_s
COMPUTE_GROWTH_S = "compute_growth_s"  # s, loss breakdown: compute-only step - ideal_step_s, where it was timed
COST_PER_MILLION_EXAMPLES = "cost_per_million_examples"  # price_per_device_hour x devices / 3600 x 1e6 / throughput
FILES_VS_SYNTHETIC = "files_vs_synthetic"  # throughput with data: files / the same config's with synthetic data
GAP_CI95_HIGH_S = "gap_ci95_high_s"  # s, 95 % CI of gap_s (bootstrap of the config's and baseline's samples)
GAP_CI95_LOW_S = "gap_ci95_low_s"  # s, 95 % CI of gap_s (bootstrap of the config's and baseline's samples)
GAP_FRACTION = "gap_fraction"  # gap_s / step_time_median_s: the share of the step lost to scaling
GAP_S = "gap_s"  # s, loss breakdown: measured median step - ideal_step_s
GOODPUT_CI95_HIGH_EXAMPLES_PER_S = "goodput_ci95_high_examples_per_s"  # examples/s, 95 % CI of goodput
GOODPUT_CI95_LOW_EXAMPLES_PER_S = "goodput_ci95_low_examples_per_s"  # examples/s, 95 % CI of goodput
GOODPUT_EXAMPLES_PER_S = "goodput_examples_per_s"  # examples/s, throughput x statistical_efficiency
GOODPUT_SCALING_EFFICIENCY = "goodput_scaling_efficiency"  # goodput_N / (N x the baseline's goodput)
IDEAL_STEP_S = "ideal_step_s"  # s, the step at perfect scaling: T1/N (strong) or T1 (weak)
INPUT_WAIT_FRACTION = "input_wait_fraction"  # loss breakdown: input_wait_s / step_time_median_s
INPUT_WAIT_S = "input_wait_s"  # s, loss breakdown: input_wait_time_s (0 within noise; 0 with synthetic in-memory data)
JOULES_PER_EXAMPLE = "joules_per_example"  # J, energy_j / (energy_window_s x throughput)
LAYOUT = "layout"  # how a config spreads its devices, e.g. "2 nodes × 1", "2 workers + 1 PS" (tfscale.labels)
MFU = "mfu"  # achieved_flops_per_s / (devices x peak_flops_per_s): model FLOPs utilisation, 0..1
MODE = "mode"  # how a config uses its devices, e.g. "data (mirrored)", "pipeline 2 stages x 4 micro-batches"
NOISE_SCALE_USED = "noise_scale_used"  # examples, the B_noise statistical_efficiency used, and whose
REST_FRACTION = "rest_fraction"  # loss breakdown: rest_s / step_time_median_s
REST_S = "rest_s"  # s, loss breakdown: gap_s minus the other terms (overheads; compute growth where not timed)
SCALING = "scaling"  # strong|weak: which definition scaling_efficiency uses
SCALING_EFFICIENCY = "scaling_efficiency"  # strong: T1/(N*TN) in step time; weak: thr_N/(N*thr_1)
SCALING_EFFICIENCY_CI95_HIGH = "scaling_efficiency_ci95_high"  # 95 % CI of scaling_efficiency (bootstrap)
SCALING_EFFICIENCY_CI95_LOW = "scaling_efficiency_ci95_low"  # 95 % CI of scaling_efficiency (bootstrap)
SPEEDUP = "speedup"  # strong: T1/TN; weak: thr_N/thr_1
SPEEDUP_CI95_HIGH = "speedup_ci95_high"  # 95 % CI of speedup (bootstrap of the config's and baseline's samples)
SPEEDUP_CI95_LOW = "speedup_ci95_low"  # 95 % CI of speedup (bootstrap of the config's and baseline's samples)
STATISTICAL_EFFICIENCY = "statistical_efficiency"  # (B_noise + B0) / (B_noise + B): learning per example vs B0
STATISTICAL_EFFICIENCY_CI95_HIGH = "statistical_efficiency_ci95_high"  # 95 % CI, from grad_noise_scale's
STATISTICAL_EFFICIENCY_CI95_LOW = "statistical_efficiency_ci95_low"  # 95 % CI, from grad_noise_scale's
STEP_TIME_CV = "step_time_cv"  # MAD / median, a robust coefficient of variation
STRAGGLER_WAIT_FRACTION = "straggler_wait_fraction"  # loss breakdown: straggler_wait_s / step_time_median_s
STRAGGLER_WAIT_S = "straggler_wait_s"  # s, loss breakdown: slowest rank's median step - median of the ranks'
SYNTHETIC_SCALING_EFFICIENCY = "synthetic_scaling_efficiency"  # input section: the data: synthetic twin's efficiency
SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S = "synthetic_throughput_examples_per_s"  # examples/s of the synthetic twin

# --- tfscale predict's table (and the report's prediction section), not a column of records ------------------
ALPHA_S = "alpha_s"  # s, fitted latency term of the all-reduce model (compute + alpha + beta x bytes x 2(N-1)/N)
BETA_S_PER_BYTE = "beta_s_per_byte"  # s/byte, fitted inverse-bandwidth term of that model
FITTED_ON = "fitted_on"  # list, the multi-device counts the model was fitted on (with the 1-device baseline)
INSIDE_INTERVAL = "inside_interval"  # hold-out: bool, the measured step inside the prediction's 95 % interval
MEASURED_STEP_S = "measured_step_s"  # s, hold-out: the held-out count's measured median step
PREDICTED_EFFICIENCY = "predicted_efficiency"  # modelled scaling efficiency at a device count, 0..1
PREDICTED_EFFICIENCY_CI95_HIGH = "predicted_efficiency_ci95_high"  # 95 % interval (bootstrap of the fit's samples)
PREDICTED_EFFICIENCY_CI95_LOW = "predicted_efficiency_ci95_low"  # 95 % interval (bootstrap of the fit's samples)
PREDICTED_STEP_CI95_HIGH_S = "predicted_step_ci95_high_s"  # s, 95 % interval (bootstrap); empty without samples
PREDICTED_STEP_CI95_LOW_S = "predicted_step_ci95_low_s"  # s, 95 % interval (bootstrap); empty without samples
PREDICTED_STEP_S = "predicted_step_s"  # s, modelled step time at a device count
PREDICTED_THROUGHPUT_EXAMPLES_PER_S = "predicted_throughput_examples_per_s"  # examples/s, global batch / step
PREDICTION_ERROR = "prediction_error"  # hold-out: predicted_step_s / measured_step_s - 1
PREDICTION_WARNINGS = "prediction_warnings"  # why a prediction deserves less trust, "; "-joined; empty: none

# --- the report's layout table (tfscale.analysis.layout_comparison), not a column of records ----------------
RANK_THROUGHPUT_MAX_EXAMPLES_PER_S = "rank_throughput_max_examples_per_s"  # examples/s, the fastest rank's
RANK_THROUGHPUT_MIN_EXAMPLES_PER_S = "rank_throughput_min_examples_per_s"  # examples/s, the slowest rank's

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
    REPEAT_MEDIANS_S, REPEAT_SAMPLES, PROCESS_SPREAD_SD_REL, PROCESS_SPREAD_DF, WARMUP_STOP, MEASURE_STOP,
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
