"""run_classifier.py end to end on a tiny original checkpoint (fixtures/encoder
/ckpt_b: 1 layer, H=32, written by the original code) and the GLUE fixture
rows; plus its result files and one-line input errors."""

import math

import numpy as np
import pytest
from scipy import stats

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError
from bert_tf.jobs.wiring import train_steps
from bert_tf.modeling.heads.classifier_head import ClassifierHead
from bert_tf.runs import run_config
from bert_tf.tasks import classification as classification_task
from bert_tf.tasks.classifier_results import eval_results
from bert_tf.tasks.classifier_results import glue_submission_lines
from bert_tf.tasks.classifier_results import prediction_lines
from bert_tf.training import input_pipeline
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import load_golden
from tests.helpers.cli import run_mains
from tests.helpers.processes import run

ENCODER = FIXTURES / "encoder"
GLUE = FIXTURES / "glue"
COMMON = [
  "--vocab_file=%s" % (ENCODER / "vocab_small.txt"),
  "--bert_config_file=%s" % (ENCODER / "ckpt_b/bert_config.json"),
  "--max_seq_length=32",
  "--save_checkpoints_steps=0",
]


ORIGINAL_DEFAULTS = {
  "data_dir": None,
  "bert_config_file": None,
  "task_name": None,
  "vocab_file": None,
  "output_dir": None,
  "init_checkpoint": None,
  "do_lower_case": True,
  "max_seq_length": 128,
  "do_train": False,
  "do_eval": False,
  "do_predict": False,
  "train_batch_size": 32,
  "eval_batch_size": 8,
  "predict_batch_size": 8,
  "learning_rate": 5e-5,
  "num_train_epochs": 3.0,
  "warmup_proportion": 0.1,
  "save_checkpoints_steps": 1000,
  "iterations_per_loop": 1000,
  "use_tpu": False,
  "tpu_name": None,
  "tpu_zone": None,
  "gcp_project": None,
  "master": None,
  "num_tpu_cores": 8,
}


def _run(tmp_path, *args):
  result = run(
    ["run_classifier.py", "--output_dir=%s" % tmp_path] + COMMON + list(args)
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return result


def _eval_results(path):
  pairs = [line.split(" = ") for line in path.read_text().splitlines()]
  return {key: float(value) for key, value in pairs}


@pytest.mark.process
def test_mrpc_train_eval_predict(tmp_path):
  submission = tmp_path / "MRPC.tsv"
  _run(
    tmp_path,
    "--task_name=MRPC",
    "--data_dir=%s" % (GLUE / "MRPC"),
    "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
    "--do_train",
    "--do_eval",
    "--do_predict",
    "--train_batch_size=2",
    "--num_train_epochs=1",
    "--learning_rate=1e-3",
    "--glue_submission_file=%s" % submission,
  )
  for name in ("train", "eval", "predict"):
    assert (tmp_path / ("%s.tf_record" % name)).exists()
  lines = (tmp_path / "eval_results.txt").read_text().splitlines()
  assert [line.split(" = ")[0] for line in lines] == [
    "eval_accuracy",
    "eval_f1",
    "eval_loss",
    "global_step",
    "loss",
  ]
  results = _eval_results(tmp_path / "eval_results.txt")
  # 6 train rows / batch 2 * 1 epoch; both dev rows in one batch.
  assert results["global_step"] == 3
  assert results["loss"] == pytest.approx(results["eval_loss"])
  assert results["eval_accuracy"] in (0.0, 0.5, 1.0)
  assert (tmp_path / "ckpt-3.index").exists()
  rows = [
    line.split("\t")
    for line in (tmp_path / "test_results.tsv").read_text().splitlines()
  ]
  assert len(rows) == 2 and all(len(row) == 2 for row in rows)
  for row in rows:
    assert sum(float(p) for p in row) == pytest.approx(1.0, abs=1e-6)
  submitted = submission.read_text().splitlines()
  assert submitted[0] == "index\tprediction"
  for i, (line, row) in enumerate(zip(submitted[1:], rows)):
    label = "1" if float(row[1]) > float(row[0]) else "0"
    assert line == "%d\t%s" % (i, label)


def _records(path, seq_length):
  dataset = input_pipeline.eval_dataset(
    [str(path)], classification_task.feature_spec(seq_length, True), 100
  )
  return next(iter(dataset))


@pytest.mark.process
def test_stsb_loads_encoder_and_head_from_checkpoint(tmp_path):
  # A checkpoint with the original encoder plus a regression head.
  config, encoder, _, _ = load_golden("ckpt_b")
  head = ClassifierHead(config, 1)
  rng = np.random.RandomState(0)
  weights = rng.normal(size=(1, config.hidden_size)).astype(np.float32)
  head.projection.output_weights.assign(weights)
  head.projection.output_bias.assign([2.5])
  init = str(tmp_path / "init" / "bert_model.ckpt")
  checkpoint_io.save_tf1_checkpoint(
    init, checkpoint_io.tf1_name_map(encoder, classifier=head)
  )
  out = tmp_path / "out"
  # learning_rate 0: three training steps leave the weights as loaded.
  _run(
    out,
    "--task_name=sts-b",
    "--data_dir=%s" % (GLUE / "STS-B"),
    "--init_checkpoint=%s" % init,
    "--do_train",
    "--do_eval",
    "--do_predict",
    "--train_batch_size=1",
    "--num_train_epochs=1",
    "--learning_rate=0",
    "--eval_batch_size=2",
  )

  def expected_scores(record_file):
    features = _records(out / record_file, 32)
    pooled = encoder(features, training=False)["pooled_output"].numpy()
    return pooled @ weights[0] + 2.5, features["label_ids"].numpy()

  scores, labels = expected_scores("eval.tf_record")
  losses = (scores - labels) ** 2
  results = _eval_results(out / "eval_results.txt")
  assert sorted(results) == [
    "eval_loss",
    "eval_pearson",
    "eval_spearmanr",
    "global_step",
    "loss",
  ]
  assert results["global_step"] == 3
  assert results["eval_loss"] == pytest.approx(losses.mean(), rel=1e-4)
  # The Estimator's `loss` averages the batch means: [0, 1] and [2].
  batch_mean = (losses[:2].mean() + losses[2]) / 2
  assert results["loss"] == pytest.approx(batch_mean, rel=1e-4)
  assert results["eval_pearson"] == pytest.approx(
    stats.pearsonr(labels, scores)[0], abs=1e-4
  )
  assert results["eval_spearmanr"] == pytest.approx(
    stats.spearmanr(labels, scores)[0], abs=1e-4
  )
  test_scores, _ = expected_scores("predict.tf_record")
  written = [
    float(line) for line in (out / "test_results.tsv").read_text().splitlines()
  ]
  assert len(written) == 3
  np.testing.assert_allclose(written, test_scores, rtol=1e-4)


def _row(probabilities, label, real=1, loss=None):
  if loss is None:
    loss = -math.log(probabilities[label])
  return {
    "probabilities": np.asarray(probabilities, np.float32),
    "per_example_loss": np.float32(loss),
    "label_ids": label,
    "is_real_example": real,
  }


def test_padding_rows_left_out_of_metrics_and_outputs():
  rows = [
    _row([0.25, 0.75], 1),
    _row([0.25, 0.75], 0),
    _row([0.5, 0.5], 0, real=0, loss=3.0),
    _row([0.5, 0.5], 0, real=0, loss=3.0),
  ]
  results = eval_results("mrpc", rows, 2, False, 7)
  assert results["eval_accuracy"] == 0.5
  assert results["eval_f1"] == pytest.approx(2 / 3)
  assert results["eval_loss"] == pytest.approx(
    (math.log(4 / 3) + math.log(4)) / 2
  )
  # Batch losses average whole batches (padding too), as on TPU.
  assert results["loss"] == pytest.approx(
    ((math.log(4 / 3) + math.log(4)) / 2 + 3.0) / 2
  )
  assert results["global_step"] == 7
  assert list(prediction_lines(rows)) == ["0.25\t0.75\n"] * 2
  assert list(glue_submission_lines(rows, ["no", "yes"])) == [
    "index\tprediction\n",
    "0\tyes\n",
    "1\tyes\n",
  ]
  regression = [
    {"predictions": np.float32(3.25), "is_real_example": 1},
    {"predictions": np.float32(0.0), "is_real_example": 0},
  ]
  assert list(prediction_lines(regression, True)) == ["3.25\n"]
  assert list(glue_submission_lines(regression)) == [
    "index\tprediction\n",
    "0\t3.25\n",
  ]


def test_train_steps_as_the_original():
  assert train_steps(3668, 32, 3.0, 0.1) == (343, 34)  # README: step 343.
  assert train_steps(6, 2, 1.0, 0.1) == (3, 0)
  with pytest.raises(InputError, match="no training step"):
    train_steps(3, 32, 3.0, 0.1)


@pytest.mark.process
def test_bad_input_is_one_line(tmp_path):
  def data_dir(name, text):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "train.tsv").write_text(text, encoding="utf-8")
    return folder

  cases = {
    "task": (
      ["--task_name=colaa", "--data_dir=%s" % (GLUE / "CoLA")],
      "--task_name=colaa: unknown task; valid: cola, sst-2, ",
    ),
    "column": (
      ["--data_dir=%s" % data_dir("column", "x\t1\t\tOk.\nx\t1\n")],
      "%s:2: expected at least 4 tab-separated columns, found 2",
    ),
    "label": (
      ["--data_dir=%s" % data_dir("label", "x\tyes\t\tOk.\n")],
      "%s:1: unknown label 'yes' (labels: 0, 1)",
    ),
    "empty": (["--data_dir=%s" % data_dir("empty", "")], "%s: empty file"),
    "no_do": (
      ["--task_name=cola", "--data_dir=%s" % (GLUE / "CoLA"), "--nodo_train"],
      "At least one of `do_train`, `do_eval`, `do_predict` must be True.",
    ),
    "seq": (
      ["--max_seq_length=600"],
      "max_seq_length 600 is longer than "
      "the model's max_position_embeddings 512",
    ),
  }
  argvs = []
  for name, (args, _) in cases.items():
    argvs.append(
      COMMON
      + [
        "--task_name=cola",
        "--do_train",
        "--data_dir=%s" % (GLUE / "CoLA"),
        "--output_dir=%s" % (tmp_path / "out"),
      ]
      + args
    )
  outcomes, defaults = run_mains("run_classifier", argvs)
  for (name, (_, message)), (code, stderr) in zip(cases.items(), outcomes):
    if "%s" in message:
      message %= tmp_path / name / "train.tsv"
    assert code == 1, (name, stderr)
    assert stderr.startswith("ERROR: " + message), (name, stderr)
    assert stderr.count("\n") == 1, (name, stderr)
  assert not (tmp_path / "out").exists()
  # The original flags keep their defaults.
  assert {k: defaults[k] for k in ORIGINAL_DEFAULTS} == ORIGINAL_DEFAULTS


@pytest.mark.process
def test_a_run_folder_of_another_model_is_refused_or_started_over(tmp_path):
  out = tmp_path / "run"
  out.mkdir()
  run_config.check_or_write(
    str(out),
    run_config.RunConfig(
      "ner", {"labels": ["O"]}, {"do_lower_case": True}, 32, {}
    ),
  )
  (out / "stale.txt").write_text("from the earlier run")
  argv = COMMON + [
    "--task_name=MRPC",
    "--data_dir=%s" % (GLUE / "MRPC"),
    "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
    "--do_predict",
    "--output_dir=%s" % out,
  ]
  (refused, started_over), _ = run_mains(
    "run_classifier", [argv, argv + ["--overwrite_output_dir"]]
  )
  assert list(refused) == [
    1,
    (
      "ERROR: --output_dir=%s holds a model with task=ner, this command "
      "asks for classifier; use --overwrite_output_dir to start over, or "
      "another --output_dir\n" % out
    ),
  ]
  assert started_over[0] == 0, started_over[1][-3000:]
  assert not (out / "stale.txt").exists()
  assert (out / "test_results.tsv").exists()
  settings = run_config.read(str(out))
  assert settings.task == "classifier"
  assert settings.head == {
    "task_name": "mrpc",
    "labels": ["0", "1"],
    "regression": False,
    "multi_label": False,
  }
