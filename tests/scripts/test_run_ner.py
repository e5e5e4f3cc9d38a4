"""run_ner.py end to end on the original tiny checkpoint ckpt_a (2 layers,
H=64) and hand-written CoNLL files: train + eval + predict, kill -9 after
the first checkpoint and resume to the same outputs as an uninterrupted
--deterministic run, --num_frozen_layers keeping the lowest layer as loaded;
a feature-based run on unlabelled text; one-line input errors."""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.ner import NerModel
from data_prep.ner import conll
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import config_file
from tests.helpers.cli import run_mains
from tests.helpers.processes import finish
from tests.helpers.processes import kill_after_first_checkpoint
from tests.helpers.scripts import CKPT_A
from tests.helpers.scripts import NER
from tests.helpers.scripts import NER_DATA
from tests.helpers.scripts import NER_STEPS
from tests.helpers.scripts import NER_TRAIN
from tests.helpers.scripts import start_run

pytestmark = pytest.mark.process  # starts programs

OUTPUTS = (
  "eval_results.txt",
  "eval_predictions.txt",
  "test_results.txt",
  "test_predictions.txt",
)


def _results(path):
  return dict(line.split(" = ") for line in path.read_text().splitlines())


def _check_predictions(path, sentences):
  """One `word gold predicted` line per input word, in order."""
  blocks = path.read_text().split("\n\n")
  assert blocks[-1] == ""
  assert len(blocks) - 1 == len(sentences)
  for block, sentence in zip(blocks, sentences):
    rows = [line.split(" ") for line in block.splitlines()]
    assert [r[0] for r in rows] == sentence.words
    assert [r[1] for r in rows] == sentence.tags
    assert all(len(r) == 3 for r in rows)


def _trained_model(output_dir):
  config = BertConfig.from_json_file(config_file("ckpt_a"))
  model = NerModel(config, 9)
  path = str(output_dir / ("ckpt-%d" % NER_STEPS))
  tf.train.Checkpoint(model=model).read(path).expect_partial()
  return model


def test_train_eval_predict_kill_and_resume(tmp_path):
  full, killed = tmp_path / "full", tmp_path / "killed"
  full_run = start_run("run_ner.py", full, *NER_TRAIN)
  killed_at = kill_after_first_checkpoint(
    start_run("run_ner.py", killed, *NER_TRAIN), killed
  )
  assert killed_at and not killed_at.endswith("ckpt-%d" % NER_STEPS)
  assert not (killed / "eval_results.txt").exists()
  _, stderr = finish(start_run("run_ner.py", killed, *NER_TRAIN))
  assert "Resuming from checkpoint %s" % killed_at in stderr
  finish(full_run)
  for name in OUTPUTS:
    assert (killed / name).read_bytes() == (full / name).read_bytes(), name

  results = _results(full / "eval_results.txt")
  assert results["global_step"] == str(NER_STEPS)
  for key in (
    "eval_f1",
    "eval_precision",
    "eval_recall",
    "eval_loss",
    "eval_f1_PER",
    "eval_recall_LOC",
    "eval_precision_MISC",
  ):
    assert key in results, key
  assert "test_f1_ORG" in _results(full / "test_results.txt")
  _check_predictions(
    full / "eval_predictions.txt", conll.read_conll(str(NER_DATA / "valid.txt"))
  )
  _check_predictions(
    full / "test_predictions.txt", conll.read_conll(str(NER_DATA / "test.txt"))
  )

  # --num_frozen_layers=1: embeddings and layer 0 exactly as loaded.
  trained = _trained_model(full).tf1_variables()
  resumed = _trained_model(killed).tf1_variables()
  reader = tf.train.load_checkpoint(ckpt_prefix("ckpt_a"))
  frozen = 0
  for name, variable in trained.items():
    np.testing.assert_array_equal(variable.numpy(), resumed[name].numpy())
    if name.startswith("cls/") or name.startswith("bert/pooler"):
      continue  # new head; the pooler is unused
    same = np.array_equal(variable.numpy(), reader.get_tensor(name))
    is_frozen = name.startswith(("bert/embeddings/", "bert/encoder/layer_0/"))
    assert same == is_frozen, name
    frozen += is_frozen
  assert frozen == 21


def _tiny_config(path, layers):
  config = json.loads(pathlib.Path(config_file("ckpt_a")).read_text())
  config["num_hidden_layers"] = layers
  path.write_text(json.dumps(config))
  return str(path)


def test_feature_based_run_and_one_line_errors(tmp_path):
  four_layers = _tiny_config(tmp_path / "config4.json", 4)
  bad_line = tmp_path / "bad_line.txt"
  bad_line.write_text("John NNP B-NP B-PER\nruns VBZ\n")
  unknown = tmp_path / "unknown.txt"
  unknown.write_text(
    "-DOCSTART- -X- -X- O\n\nThe DT B-NP O\nCup NNP I-NP B-EVENT\n"
  )
  words_only = "--predict_file=%s" % (NER_DATA / "test_words.txt")
  train = "--train_file=%s" % (NER_DATA / "train.txt")
  out = tmp_path / "out"
  ok = tmp_path / "features"
  cases = {
    "feature_mode": (
      CKPT_A
      + ["--data_dir=%s" % NER_DATA, "--do_train", "--feature_mode=bogus"],
      "--feature_mode=bogus: expected one of fine_tune, embeddings, "
      "second_to_last, last, weighted_sum_last_four, concat_last_four, "
      "weighted_sum_all",
    ),
    "layers": (
      CKPT_A
      + [
        "--data_dir=%s" % NER_DATA,
        "--do_train",
        "--feature_mode=concat_last_four",
      ],
      "--feature_mode=concat_last_four needs more layers than the model's 2",
    ),
    "malformed": (
      CKPT_A + ["--train_file=%s" % bad_line, "--do_train"],
      "%s:2: malformed line: 2 columns, the file's first word line has "
      "4" % bad_line,
    ),
    "unknown_tag": (
      CKPT_A + [train, "--eval_file=%s" % unknown, "--do_eval"],
      "%s:4: unknown tag 'B-EVENT' (labels: O B-LOC I-LOC B-MISC I-MISC "
      "B-ORG I-ORG B-PER I-PER)" % unknown,
    ),
    "unlabelled_eval": (
      CKPT_A
      + [train, "--eval_file=%s" % (NER_DATA / "test_words.txt"), "--do_eval"],
      "%s: no tags; --do_eval needs a labelled file"
      % (NER_DATA / "test_words.txt"),
    ),
    "no_labels": (
      CKPT_A + [words_only, "--do_predict"],
      "--labels is required without a training file",
    ),
    "no_file": (
      CKPT_A + ["--do_eval"],
      "--do_eval needs --eval_file or --data_dir with valid.txt or dev.txt",
    ),
    "unfreeze_feature_based": (
      CKPT_A
      + [
        "--data_dir=%s" % NER_DATA,
        "--do_train",
        "--feature_mode=last",
        "--unfreeze_schedule=0:2,1:0",
      ],
      "--unfreeze_schedule: the encoder is frozen whole with "
      "--feature_mode=last (only --feature_mode=fine_tune trains it)",
    ),
    "frozen": (
      CKPT_A
      + ["--data_dir=%s" % NER_DATA, "--do_train", "--num_frozen_layers=3"],
      "--num_frozen_layers=3: must be between 0 and the model's 2 layers",
    ),
    "no_do": (
      CKPT_A + ["--data_dir=%s" % NER_DATA],
      "At least one of `do_train`, `do_eval`, `do_predict` must be True.",
    ),
  }
  argvs = [NER + ["--output_dir=%s" % out] + args for args, _ in cases.values()]
  # A feature-based run on a random 4-layer encoder, predicting a file of
  # words only, in the same process.
  argvs.append(
    NER
    + [
      "--output_dir=%s" % ok,
      "--bert_config_file=%s" % four_layers,
      "--data_dir=%s" % NER_DATA,
      words_only,
      "--do_train",
      "--do_eval",
      "--do_predict",
      "--feature_mode=weighted_sum_last_four",
      "--lstm_units=8",
      "--train_batch_size=4",
      "--num_train_epochs=1",
    ]
  )
  outcomes, defaults = run_mains("run_ner", argvs)
  for (name, (_, message)), (code, stderr) in zip(cases.items(), outcomes):
    assert code == 1, (name, stderr)
    assert stderr.startswith("ERROR: " + message), (name, stderr)
    assert stderr.count("\n") == 1, (name, stderr)
  assert not out.exists()
  assert outcomes[-1][0] == 0, outcomes[-1][1][-3000:]
  assert (ok / "test_predictions.txt").read_text() == (
    "John {}\nvisited {}\nRome {}\n. {}\n\nThe {}\ncouncil {}\nmet {}\n. {}\n\n"
  ).format(
    *[
      line.split(" ")[1]
      for line in (ok / "test_predictions.txt").read_text().split("\n")
      if line
    ]
  )
  assert not (ok / "test_results.txt").exists()
  assert _results(ok / "eval_results.txt")["global_step"] == "2"
  assert defaults["feature_mode"] == "fine_tune"
  assert defaults["lstm_units"] == 768 and defaults["num_frozen_layers"] == 0
  assert defaults["max_seq_length"] == 128 and defaults["tag_scheme"] == "iob2"
