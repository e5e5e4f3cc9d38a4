"""run_classifier.py --multi_label and --spm_model_file, run_squad.py
--spm_model_file, end to end on tiny random-init models."""

import gzip
import json

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

from bert_tf.training import input_pipeline
from tests.conftest import FIXTURES
from tests.helpers.processes import finish
from tests.helpers.processes import start
from tests.helpers.scripts import squad_slice
from tests.helpers.sentencepiece_model import train_model

pytestmark = pytest.mark.process  # starts programs

LABELS = ["LOC", "ORG", "PER"]
ROWS = [
  ("LOC,PER", "John flew to Paris ."),
  ("", "It rained all day ."),
  ("ORG", "Acme sold cars ."),
  ("PER", "Mary sang ."),
  ("ORG,LOC", "Acme opened in Rome ."),
  ("PER,ORG", "Bob left Acme ."),
]


def _config(path, vocab_size):
  path.write_text(
    json.dumps(
      {
        "vocab_size": vocab_size,
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 128,
        "type_vocab_size": 2,
      }
    )
  )
  return str(path)


def _first_record(path, spec):
  return next(iter(input_pipeline.eval_dataset([str(path)], spec, 1)))


def test_multi_label_classifier_and_squad_with_sentencepiece(tmp_path):
  data = json.load(
    gzip.open(FIXTURES / "squad" / "small_v1_first_answer.json.gz")
  )
  contexts = [p["context"] for p in data["data"][0]["paragraphs"]]
  model_file = train_model(tmp_path, contexts + [t for _, t in ROWS], 600)
  sp = spm.SentencePieceProcessor(model_file=model_file)
  config = _config(tmp_path / "config.json", sp.GetPieceSize())
  for split in ("train", "dev", "test"):
    (tmp_path / (split + ".tsv")).write_text(
      "".join("%s\t%s\n" % row for row in ROWS)
    )
  classifier_out = tmp_path / "classifier"
  classifier = start(
    "run_classifier.py",
    "--noprogress",
    "--task_name=tsv",
    "--multi_label",
    "--labels=" + ",".join(LABELS),
    "--label_column=0",
    "--text_a_column=1",
    "--data_dir=%s" % tmp_path,
    "--spm_model_file=%s" % model_file,
    "--bert_config_file=%s" % config,
    "--output_dir=%s" % classifier_out,
    "--max_seq_length=32",
    "--do_train",
    "--do_eval",
    "--do_predict",
    "--train_batch_size=2",
    "--num_train_epochs=2",
    "--eval_every_steps=2",
    "--best_metric=eval_micro_f1",
    "--save_checkpoints_steps=0",
  )
  squad_file = squad_slice(tmp_path, "small_v1_first_answer", 2)
  squad_out = tmp_path / "squad"
  squad = start(
    "run_squad.py",
    "--noprogress",
    "--do_predict",
    "--predict_file=%s" % squad_file,
    "--spm_model_file=%s" % model_file,
    "--bert_config_file=%s" % config,
    "--output_dir=%s" % squad_out,
    "--max_seq_length=96",
    "--doc_stride=48",
    "--max_query_length=24",
    "--seed=3",
  )
  finish(classifier)
  finish(squad)

  # Classifier: SentencePiece ids, 0/1 label vectors, multi-label metrics.
  record = _first_record(
    classifier_out / "train.tf_record",
    {
      "input_ids": tf.io.FixedLenFeature([32], tf.int64),
      "label_ids": tf.io.FixedLenFeature([3], tf.int64),
    },
  )
  ids = (
    [sp.PieceToId("[CLS]")]
    + sp.EncodeAsIds(ROWS[0][1].lower())
    + [sp.PieceToId("[SEP]")]
  )
  assert record["input_ids"].numpy()[0, : len(ids)].tolist() == ids
  assert record["label_ids"].numpy()[0].tolist() == [1, 0, 1]
  keys = [
    line.split(" = ")[0]
    for line in (classifier_out / "eval_results.txt").read_text().splitlines()
  ]
  assert keys == [
    "eval_f1_LOC",
    "eval_f1_ORG",
    "eval_f1_PER",
    "eval_loss",
    "eval_macro_f1",
    "eval_micro_f1",
    "eval_subset_accuracy",
    "global_step",
    "loss",
  ]
  history = [
    json.loads(line)
    for line in (classifier_out / "eval_history.jsonl").read_text().splitlines()
  ]
  assert [h["global_step"] for h in history] == [2, 4, 6]
  probabilities = np.array(
    [
      [float(p) for p in line.split("\t")]
      for line in (classifier_out / "test_results.tsv").read_text().splitlines()
    ]
  )
  # One independent probability per label, not a distribution.
  assert probabilities.shape == (6, 3)
  assert ((probabilities > 0) & (probabilities < 1)).all()
  assert not np.allclose(probabilities.sum(-1), 1.0)

  # SQuAD: SentencePiece features, answers projected back onto the context.
  record = _first_record(
    squad_out / "eval.tf_record",
    {"input_ids": tf.io.FixedLenFeature([96], tf.int64)},
  )
  question = data["data"][0]["paragraphs"][0]["qas"][0]["question"]
  ids = [sp.PieceToId("[CLS]")] + sp.EncodeAsIds(question.lower())[:24]
  assert record["input_ids"].numpy()[0, : len(ids)].tolist() == ids
  predictions = json.loads((squad_out / "predictions.json").read_text())
  paragraphs = json.loads(open(squad_file).read())["data"][0]["paragraphs"]
  context = {qa["id"]: p["context"] for p in paragraphs for qa in p["qas"]}
  assert list(predictions) == list(context)
  assert all(
    text and text in context[qas_id] for qas_id, text in predictions.items()
  )
  assert "\u2581" not in "".join(predictions.values())
