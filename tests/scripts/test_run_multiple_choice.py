"""run_multiple_choice.py end to end on the hand-written SWAG files (fixtures
/swag) with the tiny original checkpoint fixtures/encoder/ckpt_b (1 layer,
H=32): kill -9 after the first checkpoint and resume to the outputs of an
uninterrupted run, test probabilities recomputed from the final checkpoint,
one-line input errors, the paper's SWAG defaults."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.records.task_schemas import multiple_choice_schema
from bert_tf.tasks.multiple_choice import MultipleChoiceModel
from bert_tf.training import input_pipeline
from tests.helpers.checkpoints import config_of
from tests.helpers.cli import run_mains
from tests.helpers.processes import finish
from tests.helpers.processes import kill_after_first_checkpoint
from tests.helpers.scripts import MC
from tests.helpers.scripts import MC_STEPS
from tests.helpers.scripts import MC_TRAIN
from tests.helpers.scripts import start_run

pytestmark = pytest.mark.process  # starts programs

DEFAULTS = {
  "data_dir": None,
  "bert_config_file": None,
  "vocab_file": None,
  "output_dir": None,
  "init_checkpoint": None,
  "do_lower_case": True,
  "max_seq_length": 128,
  "do_train": False,
  "do_eval": False,
  "do_predict": False,
  "train_batch_size": 16,
  "eval_batch_size": 8,
  "predict_batch_size": 8,
  "learning_rate": 2e-5,
  "num_train_epochs": 3.0,
  "warmup_proportion": 0.1,
  "save_checkpoints_steps": 1000,
  "iterations_per_loop": 1000,
}


def _start(output_dir, *args):
  return start_run("run_multiple_choice.py", output_dir, *args)


def _variables(output_dir):
  reader = tf.train.load_checkpoint(str(output_dir / ("ckpt-%d" % MC_STEPS)))
  return {
    n: reader.get_tensor(n)
    for n in reader.get_variable_to_shape_map()
    if n.startswith(("model/", "optimizer/"))
  }


def _probabilities(output_dir, record_file):
  """Per choice pooled . w + b, softmaxed, with the final checkpoint;
  -> (probabilities [N, 4], label_ids [N])."""
  model = MultipleChoiceModel(config_of("ckpt_b"))
  tf.train.Checkpoint(model=model).read(
    str(output_dir / ("ckpt-%d" % MC_STEPS))
  ).expect_partial()
  batch = next(
    iter(
      input_pipeline.eval_dataset(
        [str(output_dir / record_file)],
        multiple_choice_schema(4, 24).parse_spec(),
        100,
      )
    )
  )
  w = model.head.projection.output_weights.numpy()[0]
  b = model.head.projection.output_bias.numpy()[0]
  logits = np.stack(
    [
      model.encoder(
        {k: batch[k][:, c] for k in ("input_ids", "input_mask", "segment_ids")},
        training=False,
      )["pooled_output"].numpy()
      @ w
      + b
      for c in range(4)
    ],
    1,
  )
  return (
    np.exp(logits) / np.exp(logits).sum(1, keepdims=True),
    batch["label_ids"].numpy(),
  )


def test_train_eval_predict_kill_and_resume(tmp_path):
  full, killed = tmp_path / "full", tmp_path / "killed"
  full_run = _start(full, *MC_TRAIN)
  killed_at = kill_after_first_checkpoint(_start(killed, *MC_TRAIN), killed)
  assert killed_at and not killed_at.endswith("ckpt-%d" % MC_STEPS)
  assert not (killed / "eval_results.txt").exists()
  _, stderr = finish(_start(killed, *MC_TRAIN))
  assert "Resuming from checkpoint %s" % killed_at in stderr
  finish(full_run)

  expected, resumed = _variables(full), _variables(killed)
  assert sorted(resumed) == sorted(expected) and len(expected) > 20
  for name, value in expected.items():
    np.testing.assert_array_equal(resumed[name], value, err_msg=name)
  for name in ("eval_results.txt", "test_results.tsv", "train.tf_record"):
    assert (killed / name).read_bytes() == (full / name).read_bytes(), name

  lines = (full / "eval_results.txt").read_text().splitlines()
  results = dict(line.split(" = ") for line in lines)
  assert list(results) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
  assert results["global_step"] == str(MC_STEPS)
  probabilities, labels = _probabilities(full, "eval.tf_record")
  losses = -np.log(probabilities[np.arange(3), labels])
  assert float(results["eval_accuracy"]) == pytest.approx(
    np.mean(probabilities.argmax(1) == labels)
  )
  assert float(results["eval_loss"]) == pytest.approx(losses.mean(), 1e-5)
  # 3 dev examples in batches of 2: `loss` averages the two batch means.
  assert float(results["loss"]) == pytest.approx(
    (losses[:2].mean() + losses[2]) / 2, 1e-5
  )
  written = np.array(
    [
      [float(p) for p in line.split("\t")]
      for line in (full / "test_results.tsv").read_text().splitlines()
    ]
  )
  assert written.shape == (3, 4)
  np.testing.assert_allclose(
    written, _probabilities(full, "predict.tf_record")[0], atol=1e-6
  )


def test_bad_input_is_one_line(tmp_path):
  def data_dir(name, files):
    folder = tmp_path / name
    folder.mkdir()
    for file_name, text in files.items():
      (folder / file_name).write_text(text, encoding="utf-8")
    return folder

  header = (
    ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,"
    "ending1,ending2,ending3,label\n"
  )
  row = '{"context": "c", "endings": %s, "label": 0}\n'
  cases = {
    "columns": (
      {"train.csv": header + "0,v,1,s,a,b,g,e0,e1,e2,0\n"},
      "{}/train.csv:2: expected 12 comma-separated columns (as "
      "the header), found 11",
    ),
    "label": (
      {"train.csv": header + "0,v,1,s,a,b,g,e0,e1,e2,e3,4\n"},
      "{}/train.csv:2: label 4 out of range for 4 choices (0-3)",
    ),
    "too_few": (
      {"train.jsonl": row % '["a", "b"]' + row % '["a"]'},
      '{}/train.jsonl:2: "endings" must be a list of at least 2',
    ),
    "choices": (
      {"train.jsonl": row % '["a", "b", "c"]' + row % '["a", "b"]'},
      "{}/train.jsonl:2: 2 endings, but line 1 has 3",
    ),
    "splits": (
      {"train.jsonl": row % '["a", "b", "c"]', "dev.jsonl": row % '["a", "b"]'},
      "{}/dev.jsonl: 2 choices per example, but {}/train.jsonl "
      "has 3; every split needs the same number",
    ),
    "missing": ({}, "--data_dir={}: no train file (train.csv or train.jsonl)"),
  }
  out = tmp_path / "out"
  argvs, messages = [], []
  for name, (files, message) in cases.items():
    folder = data_dir(name, files)
    argvs.append(
      MC
      + [
        "--data_dir=%s" % folder,
        "--do_train",
        "--do_eval",
        "--output_dir=%s" % out,
      ]
    )
    messages.append(message.replace("{}", str(folder)))
  argvs.append(MC + ["--data_dir=x", "--output_dir=%s" % out])
  messages.append(
    "At least one of `do_train`, `do_eval`, `do_predict` must be True."
  )
  outcomes, defaults = run_mains("run_multiple_choice", argvs)
  for message, (code, stderr) in zip(messages, outcomes):
    assert code == 1, (message, stderr)
    assert stderr.startswith("ERROR: " + message), (message, stderr)
    assert stderr.count("\n") == 1, (message, stderr)
  assert not out.exists()
  assert {k: defaults[k] for k in DEFAULTS} == DEFAULTS
