"""PretrainingModel (original losses/metrics, cls/* checkpoint names), the
engine-checkpoint export and dynamic masking."""

import gzip

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints.engine_checkpoint import export_tf1_checkpoint
from bert_tf.io_utils import InputError
from bert_tf.jobs.wiring import tf1_init_fn
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.tasks.classification import ClassifierModel
from bert_tf.tasks.dynamic_masking import DynamicMasking
from bert_tf.tasks.dynamic_masking import unmasked_input_ids
from bert_tf.tasks.pretraining import pretraining_loss
from bert_tf.tasks.pretraining import pretraining_metrics
from bert_tf.tasks.pretraining import PretrainingModel
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.trainer import Trainer
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import golden_inputs

GOLDEN_A = FIXTURES / "encoder" / "expected_a.npz"
CLS_NAMES = {
  "cls/predictions/transform/dense/kernel": [64, 64],
  "cls/predictions/transform/dense/bias": [64],
  "cls/predictions/transform/LayerNorm/beta": [64],
  "cls/predictions/transform/LayerNorm/gamma": [64],
  "cls/predictions/output_bias": [3000],
  "cls/seq_relationship/output_weights": [2, 64],
  "cls/seq_relationship/output_bias": [2],
}


def _config_a():
  return BertConfig.from_json_file(
    str(FIXTURES / "encoder" / "ckpt_a" / "bert_config.json")
  )


def _features_a(positions, labels, weights, nsp_labels):
  features = {k: tf.constant(v) for k, v in golden_inputs().items()}
  features.update(
    masked_lm_positions=tf.constant(positions, tf.int32),
    masked_lm_ids=tf.constant(labels, tf.int32),
    masked_lm_weights=tf.constant(weights, tf.float32),
    next_sentence_labels=tf.constant(nsp_labels, tf.int32)[:, None],
  )
  return features


def test_loss_formula_on_hand_made_tensors():
  features = {
    "masked_lm_weights": tf.constant([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
  }
  outputs = {
    "masked_lm_example_loss": tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
    "next_sentence_example_loss": tf.constant([0.5, 1.5]),
  }
  # (1 + 2 + 4) / (3 + 1e-5) + mean(0.5, 1.5); weight-0 losses are ignored.
  expected = 7.0 / (3.0 + 1e-5) + 1.0
  assert float(pretraining_loss(features, outputs)) == pytest.approx(
    expected, rel=1e-6
  )
  # No real prediction at all: the 1e-5 keeps the MLM term at 0, not NaN.
  features["masked_lm_weights"] = tf.zeros([2, 3])
  assert float(pretraining_loss(features, outputs)) == pytest.approx(1.0)


def test_metrics_on_hand_made_tensors():
  # Row 0 predicts token 1 twice (label 1 then 2), row 1 padding only.
  log_probs = np.log(np.full((2, 2, 3), 0.1, np.float32))
  log_probs[:, :, 1] = np.log(0.8)
  features = {
    "masked_lm_ids": tf.constant([[1, 2], [1, 1]]),
    "masked_lm_weights": tf.constant([[1.0, 1.0], [0.0, 0.0]]),
    "next_sentence_labels": tf.constant([[0], [1]]),
  }
  outputs = {
    "masked_lm_log_probs": tf.constant(log_probs),
    "masked_lm_example_loss": tf.constant(-log_probs[:, :, 1]),
    "next_sentence_log_probs": tf.math.log(
      tf.constant([[0.9, 0.1], [0.7, 0.3]])
    ),
    "next_sentence_example_loss": -tf.math.log(tf.constant([0.9, 0.3])),
  }
  metrics = {
    k: (float(tf.reduce_sum(n)), float(tf.reduce_sum(d)))
    for k, (n, d) in pretraining_metrics(features, outputs).items()
  }
  ratio = {k: n / d for k, (n, d) in metrics.items()}
  assert ratio["masked_lm_accuracy"] == pytest.approx(0.5)
  assert ratio["masked_lm_loss"] == pytest.approx(-np.log(0.8))
  assert ratio["next_sentence_accuracy"] == pytest.approx(0.5)
  assert ratio["next_sentence_loss"] == pytest.approx(
    -(np.log(0.9) + np.log(0.3)) / 2
  )
  assert metrics["loss"][1] == pytest.approx(1.0)  # One batch.
  assert ratio["loss"] == pytest.approx(
    float(pretraining_loss(features, outputs)), rel=1e-6
  )


def test_original_checkpoint_heads_and_loss_match_original():
  """--init_checkpoint on a checkpoint written by the original code: every
  cls/* head loads, outputs and loss equal the original's log-probs."""
  golden = np.load(GOLDEN_A)
  model = PretrainingModel(_config_a())
  names = model.tf1_variables()
  assert {
    n: list(names[n].shape) for n in names if n.startswith("cls/")
  } == CLS_NAMES
  tf1_init_fn(ckpt_prefix("ckpt_a"))(model)
  positions = [[1, 5, 0], [2, 3, 9], [0, 0, 0]]
  labels = [[7, 2999, 0], [100, 5, 42], [0, 0, 0]]
  weights = [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
  nsp_labels = [0, 1, 1]
  features = _features_a(positions, labels, weights, nsp_labels)
  outputs = model(features, training=False)
  expected_mlm = np.take_along_axis(
    golden["mlm_log_probs"], np.array(positions)[:, :, None], axis=1
  )
  np.testing.assert_allclose(
    outputs["masked_lm_log_probs"], expected_mlm, atol=2e-4
  )
  np.testing.assert_allclose(
    outputs["next_sentence_log_probs"], golden["nsp_log_probs"], atol=2e-5
  )
  mlm_losses = -np.take_along_axis(
    expected_mlm, np.array(labels)[:, :, None], axis=2
  )[:, :, 0]
  nsp_losses = -golden["nsp_log_probs"][np.arange(3), nsp_labels]
  expected_loss = (mlm_losses * weights).sum() / (
    np.sum(weights) + 1e-5
  ) + nsp_losses.mean()
  assert float(pretraining_loss(features, outputs)) == pytest.approx(
    expected_loss, abs=2e-4
  )


def _random_pretraining_model(config, seed):
  model = PretrainingModel(config)
  rng = np.random.RandomState(seed)
  for variable in model.weights:
    variable.assign(rng.normal(size=variable.shape).astype(np.float32))
  return model


def test_export_engine_checkpoint_round_trip(tmp_path):
  config = BertConfig(
    50,
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
    type_vocab_size=2,
  )
  source = _random_pretraining_model(config, 0)
  # What `Trainer` saves: model + optimizer (slots, step).
  optimizer = create_optimizer(1e-3, 10, 1)
  optimizer.build(source.trainable_variables)
  optimizer.iterations.assign(7)
  tf.train.Checkpoint(model=source, optimizer=optimizer).save(
    str(tmp_path / "run" / "ckpt")
  )
  prefix = export_tf1_checkpoint(
    PretrainingModel(config), str(tmp_path / "run"), str(tmp_path / "tf1")
  )
  shapes = checkpoint_io.checkpoint_shapes(prefix)
  assert int(tf.train.load_checkpoint(prefix).get_tensor("global_step")) == 7
  assert set(shapes) == set(source.tf1_variables()) | {"global_step"}
  # --init_checkpoint of a new run loads every variable, heads included.
  target = PretrainingModel(config)
  tf1_init_fn(prefix)(target)
  for name, variable in source.tf1_variables().items():
    np.testing.assert_array_equal(
      target.tf1_variables()[name], variable, err_msg=name
    )
  # A classifier run is not a pre-training checkpoint.
  tf.train.Checkpoint(model=ClassifierModel(config, 2)).save(
    str(tmp_path / "cls" / "ckpt")
  )
  with pytest.raises(InputError, match="not a checkpoint of this model"):
    export_tf1_checkpoint(
      PretrainingModel(config), str(tmp_path / "cls"), str(tmp_path / "out")
    )


@pytest.fixture(scope="module")
def golden_batch(tmp_path_factory):
  """The original's 118 instances of sample_text.txt, as one batch."""
  path = tmp_path_factory.mktemp("golden") / "instances.tfrecord"
  path.write_bytes(
    gzip.decompress(
      (FIXTURES / "pretraining" / "instances.tfrecord.gz").read_bytes()
    )
  )
  specs = pretraining_task.feature_spec(128, 20)
  return next(iter(input_pipeline.eval_dataset([str(path)], specs, 1000)))


def test_unmasked_ids_restore_the_original_text(golden_batch, vocab_file):
  tokenizer = tokenization.FullTokenizer(vocab_file, True)
  with open(
    FIXTURES / "pretraining" / "sample_text.txt", encoding="utf-8"
  ) as f:
    text = " %s " % " ".join(tokenizer.tokenize(f.read()))
  restored = unmasked_input_ids(golden_batch).numpy()
  assert "[MASK]" in " ".join(
    tokenizer.convert_ids_to_tokens(golden_batch["input_ids"].numpy()[0])
  )
  for ids, mask in zip(restored, golden_batch["input_mask"].numpy()):
    tokens = tokenizer.convert_ids_to_tokens(ids[mask == 1])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    # Segments A and B are contiguous token runs of the sample text.
    for segment in " ".join(tokens[1:-1]).split(" [SEP] "):
      assert " %s " % segment in text


def test_dynamic_masking_rates_and_never_special_tokens(
  golden_batch, vocab_file
):
  tf.random.set_seed(0)
  masking = DynamicMasking.from_vocab_file(vocab_file, 20)
  vocab = tokenization.load_vocab(vocab_file)
  original = unmasked_input_ids(golden_batch).numpy()
  lengths = golden_batch["input_mask"].numpy().sum(-1)
  masked = {k: v.numpy() for k, v in masking(golden_batch).items()}
  total = changed_to_mask = kept = 0
  for row, length in enumerate(lengths):
    count = int(masked["masked_lm_weights"][row].sum())
    positions = masked["masked_lm_positions"][row, :count]
    np.testing.assert_array_equal(masked["masked_lm_weights"][row, count:], 0)
    specials = np.isin(
      original[row, :length], [vocab["[CLS]"], vocab["[SEP]"]]
    ).sum()
    # ceil(15% of the maskable tokens) in float32 as tf_text, capped at
    # max_predictions_per_seq.
    rate = np.float32(length - specials) * np.float32(0.15)
    assert count == min(20, int(np.ceil(rate)))
    assert np.all(positions < length)
    assert not np.isin(
      original[row, positions], [vocab["[CLS]"], vocab["[SEP]"], 0]
    ).any()
    np.testing.assert_array_equal(
      masked["masked_lm_ids"][row, :count], original[row, positions]
    )
    untouched = np.setdiff1d(np.arange(128), positions)
    np.testing.assert_array_equal(
      masked["input_ids"][row, untouched], original[row, untouched]
    )
    new = masked["input_ids"][row, positions]
    total += count
    changed_to_mask += (new == vocab["[MASK]"]).sum()
    kept += (new == original[row, positions]).sum()
  assert total > 1500
  assert 0.75 < changed_to_mask / total < 0.85
  assert 0.06 < kept / total < 0.14


@pytest.mark.process
def test_trainer_with_dynamic_masking_checkpoints(
  golden_batch, vocab_file, tmp_path
):
  """Stateful masking ops must not break the Trainer's input checkpoint."""
  config = BertConfig(
    30522,
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=128,
    type_vocab_size=2,
  )
  rows = tf.data.Dataset.from_tensor_slices(golden_batch)
  masking = DynamicMasking.from_vocab_file(vocab_file, 20)
  dataset_fn = masking.wrap(
    lambda ctx=None: rows.repeat().batch(8, drop_remainder=True)
  )
  trainer = Trainer(
    PretrainingTask(config, 128, 20),
    lambda: create_optimizer(1e-3, 4, 1),
    str(tmp_path),
    iterations_per_loop=2,
    save_checkpoints_steps=2,
    progress=False,
  )
  history = trainer.train(dataset_fn, 4)
  assert [h["step"] for h in history] == [2, 4]
  assert all(np.isfinite(h["loss"]) for h in history)
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-4")
