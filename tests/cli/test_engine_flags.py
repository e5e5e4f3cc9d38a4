"""engine_flags defaults and distribution.get_strategy / configure_runtime."""

import copy

from absl import flags
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.jobs import engine_flags
from bert_tf.training import distribution


def _engine_flag_values(argv):
  """A private copy of the engine flags, parsed from argv (FLAGS untouched)."""
  if "use_xla" not in flags.FLAGS:
    engine_flags.define_engine_flags()
  values = flags.FlagValues()
  for flag in flags.FLAGS.get_flags_for_module(engine_flags):
    values[flag.name] = copy.deepcopy(flag)
  values(["prog"] + argv)
  return values


def test_flag_defaults_match_original_and_feed_the_engine():
  values = _engine_flag_values([])
  assert values.iterations_per_loop == 1000
  assert values.save_checkpoints_steps == 1000
  assert values.num_tpu_cores == 8 and values.use_tpu is False
  assert values.keep_checkpoint_max == 5 and values.dtype == "float32"
  assert values["use_tpu"].help == "Whether to use TPU or GPU/CPU."
  values = _engine_flag_values(["--use_xla", "--gradient_accumulation_steps=2"])
  kwargs = engine_flags.trainer_kwargs(values)
  assert (
    kwargs["use_xla"] is True and kwargs["gradient_accumulation_steps"] == 2
  )
  assert engine_flags.strategy_kwargs(values)["use_tpu"] is False
  assert engine_flags.runtime_kwargs(values)["dtype"] == "float32"


def test_default_strategy_and_errors(monkeypatch):
  monkeypatch.delenv("TF_CONFIG", raising=False)
  strategy = distribution.get_strategy()
  assert strategy.num_replicas_in_sync == 1
  assert strategy is tf.distribute.get_strategy()
  with pytest.raises(InputError, match="--num_gpus=2"):
    distribution.get_strategy(num_gpus=2)
  monkeypatch.setenv("TF_CONFIG", "{not json")
  with pytest.raises(InputError, match="TF_CONFIG"):
    distribution.get_strategy()
  with pytest.raises(InputError, match="--dtype"):
    distribution.configure_runtime(dtype="float64")


def test_check_do_flags_wants_do_train_with_train_records():
  from bert_tf.jobs import wiring  # pylint: disable=g-import-not-at-top

  values = flags.FlagValues()
  flags.DEFINE_bool("do_train", False, "", flag_values=values)
  flags.DEFINE_bool("do_eval", False, "", flag_values=values)
  flags.DEFINE_string("train_records", None, "", flag_values=values)
  values(["prog", "--do_eval", "--train_records=out/train.tf_record-*"])
  with pytest.raises(InputError, match="^--train_records needs --do_train$"):
    wiring.check_do_flags(values, "do_train", "do_eval")
  values["do_train"].value = True
  wiring.check_do_flags(values, "do_train", "do_eval")
  values = flags.FlagValues()  # a script without --train_records
  flags.DEFINE_bool("do_train", False, "", flag_values=values)
  flags.DEFINE_bool("do_eval", True, "", flag_values=values)
  values(["prog"])
  wiring.check_do_flags(values, "do_train", "do_eval")
  with pytest.raises(InputError, match="At least one of"):
    values["do_eval"].value = False
    wiring.check_do_flags(values, "do_train", "do_eval")
