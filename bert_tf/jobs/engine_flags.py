"""Flags shared by run_squad.py, run_classifier.py and run_pretraining.py.

The original ones keep their names, defaults and help text; the new ones
drive the engine (strategy, precision, XLA, determinism, checkpoints).
`define_engine_flags()` defines them (once, from a script).

Example:
    from bert_tf.jobs import engine_flags
    engine_flags.define_engine_flags()  # at module level of a script
    FLAGS = flags.FLAGS
    configure_runtime(**engine_flags.runtime_kwargs(FLAGS))
    strategy = get_strategy(**engine_flags.strategy_kwargs(FLAGS))
    trainer = Trainer(model_fn, optimizer_fn, FLAGS.output_dir, strategy,
                      **engine_flags.trainer_kwargs(FLAGS))
"""

from absl import flags

from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from bert_tf.training.choices import DTYPES
from bert_tf.training.choices import OPTIMIZER_TYPES


def define_engine_flags():
  """Defines the engine flags in the global FLAGS (once per program)."""
  # Original flags (identical in the three training scripts).
  flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
  flags.DEFINE_string(
    "tpu_name",
    None,
    "The Cloud TPU to use for training. This should be either the name "
    "used when creating the Cloud TPU, or a grpc://ip.address.of.tpu:8470 "
    "url.",
  )
  flags.DEFINE_string(
    "tpu_zone",
    None,
    "[Optional] GCE zone where the Cloud TPU is located in. If not "
    "specified, we will attempt to automatically detect the GCE project from "
    "metadata.",
  )
  flags.DEFINE_string(
    "gcp_project",
    None,
    "[Optional] Project name for the Cloud TPU-enabled project. If not "
    "specified, we will attempt to automatically detect the GCE project from "
    "metadata.",
  )
  flags.DEFINE_string("master", None, "[Optional] TensorFlow master URL.")
  # The original accepted them without --use_tpu (command lines toggle it).
  for name in ("tpu_name", "tpu_zone", "gcp_project", "master"):
    flag_needs.requires(name, "use_tpu", warn=True)
  flags.DEFINE_integer(
    "num_tpu_cores",
    8,
    "Only used if `use_tpu` is True. Total number of TPU cores to use.",
  )
  flag_checks.positive("num_tpu_cores")
  flag_needs.ignored("num_tpu_cores", "TPUStrategy uses every core of the TPU")
  flags.DEFINE_integer(
    "save_checkpoints_steps", 1000, "How often to save the model checkpoint."
  )
  flag_checks.non_negative("save_checkpoints_steps")
  flags.DEFINE_integer(
    "iterations_per_loop",
    1000,
    "How many steps to make in each estimator call.",
  )
  flag_checks.positive("iterations_per_loop")

  # New flags.
  flags.DEFINE_integer(
    "num_gpus",
    None,
    "GPUs to train on with MirroredStrategy; default: all visible GPUs. "
    "Ignored with --use_tpu or a multi-worker TF_CONFIG.",
  )
  flag_checks.non_negative("num_gpus")
  flag_needs.excludes("num_gpus", "use_tpu")
  define_dtype_flag()
  flags.DEFINE_bool(
    "use_xla",
    False,
    "Compile the forward/backward pass with XLA (jit_compile).",
  )
  flags.DEFINE_integer(
    "gradient_accumulation_steps",
    1,
    "Split each per-replica batch into this many micro-batches and apply one "
    "update with their averaged gradients (batch sizes stay per update).",
  )
  flag_checks.positive("gradient_accumulation_steps")
  flags.DEFINE_integer("seed", None, "Random seed (Python, NumPy, TF, Keras).")
  flag_checks.in_range("seed", 0, 2**32 - 1)
  flags.DEFINE_bool(
    "deterministic",
    False,
    "Reproducible runs: fixed seed (0 unless --seed) and deterministic TF "
    "ops. Slower.",
  )
  flags.DEFINE_enum(
    "optimizer",
    "adamw",
    list(OPTIMIZER_TYPES),
    "adamw: the original AdamWeightDecay; lamb: Keras LAMB "
    "for large-batch pre-training.",
  )
  flags.DEFINE_integer(
    "keep_checkpoint_max",
    5,
    "How many recent checkpoints to keep in output_dir (0: all).",
  )
  flag_checks.non_negative("keep_checkpoint_max")
  # Training settings of ours. (The original's -- batch sizes, learning
  # rate, steps -- stay silent with their mode off: one command line serves
  # every mode there.)
  for name in (
    "use_xla",
    "gradient_accumulation_steps",
    "optimizer",
    "keep_checkpoint_max",
  ):
    flag_needs.requires(name, "do_train")
  flags.DEFINE_bool(
    "progress",
    True,
    "Show a live progress line (steps, loss, examples/s, ETA) "
    "when writing to a terminal.",
  )


def define_dtype_flag():
  """`--dtype`: the Keras mixed-precision policy of the model (also for
  extract_features.py). Variables, checkpoints, softmax/log-softmax, the
  LayerNorm statistics and the optimizer stay float32 under every policy."""
  flags.DEFINE_enum(
    "dtype",
    "float32",
    list(DTYPES),
    "Compute precision (Keras mixed-precision policy): "
    "mixed_bfloat16 runs the matmuls in bfloat16 (about 2x "
    "on CPUs with AVX-512 BF16/AMX, TPUs, recent GPUs); "
    "mixed_float16 adds dynamic loss scaling.",
  )


def strategy_kwargs(settings):
  """Arguments for `distribution.get_strategy`."""
  names = (
    "use_tpu",
    "tpu_name",
    "tpu_zone",
    "gcp_project",
    "master",
    "num_gpus",
  )
  return {n: getattr(settings, n) for n in names}


def runtime_kwargs(settings):
  """Arguments for `distribution.configure_runtime`."""
  return {n: getattr(settings, n) for n in ("seed", "deterministic", "dtype")}


def trainer_kwargs(settings):
  """Keyword arguments of `Trainer` that come straight from flags."""
  names = (
    "iterations_per_loop",
    "save_checkpoints_steps",
    "keep_checkpoint_max",
    "gradient_accumulation_steps",
    "progress",
    "use_xla",
  )
  return {n: getattr(settings, n) for n in names}
