"""Tiny runs of the run_*.py scripts: the arguments and data the script and
hostile tests share, and `start_run` to launch one.

Every run uses the original tiny checkpoints (tests/helpers/checkpoints.py)
and fixture data, so it trains for seconds.

Example:
    process = start_run("run_ner.py", tmp_path, *NER_TRAIN)
    kill_after_first_checkpoint(process, tmp_path)
"""

import gzip
import json
import random

from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers import processes
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import config_file
from tests.helpers.checkpoints import VOCAB

GLUE = FIXTURES / "glue"
NER_DATA = FIXTURES / "ner"
SWAG = FIXTURES / "swag"

# The arguments each script gets before a test's own.
SQUAD = [
  "--vocab_file=%s" % VOCAB,
  "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
  "--bert_config_file=%s" % config_file("ckpt_b"),
  "--max_seq_length=64",
  "--doc_stride=32",
  "--max_query_length=16",
]
NER = ["--vocab_file=%s" % VOCAB, "--max_seq_length=32", "--noprogress"]
CKPT_A = [
  "--bert_config_file=%s" % config_file("ckpt_a"),
  "--init_checkpoint=%s" % ckpt_prefix("ckpt_a"),
]
MC = [
  "--vocab_file=%s" % VOCAB,
  "--max_seq_length=24",
  "--bert_config_file=%s" % config_file("ckpt_b"),
]
_BASE = {
  "run_squad.py": SQUAD,
  "run_ner.py": NER + CKPT_A,
  "run_multiple_choice.py": MC,
}

# 8 sentences -> 11 windows (document context, 30 pieces each): 11 / 2 * 4
# = 22 steps.
NER_TRAIN = [
  "--data_dir=%s" % NER_DATA,
  "--do_train",
  "--do_eval",
  "--do_predict",
  "--deterministic",
  "--document_context",
  "--num_frozen_layers=1",
  "--train_batch_size=2",
  "--num_train_epochs=4",
  "--learning_rate=1e-3",
  "--save_checkpoints_steps=5",
  "--iterations_per_loop=5",
]
NER_STEPS = 22
# 8 training examples / batch 2 * 50 epochs = 200 steps.
MC_TRAIN = [
  "--data_dir=%s" % SWAG,
  "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
  "--do_train",
  "--do_eval",
  "--do_predict",
  "--deterministic",
  "--train_batch_size=2",
  "--num_train_epochs=50",
  "--learning_rate=1e-3",
  "--save_checkpoints_steps=5",
  "--iterations_per_loop=5",
  "--eval_batch_size=2",
]
MC_STEPS = 200
# run_classifier on `write_flipped_data`: 32 rows, batch 8, 20 epochs: 80
# steps planned, an evaluation every 10.
CLASSIFIER_EVAL = [
  "--task_name=tsv",
  "--text_a_column=0",
  "--label_column=1",
  "--labels=neg,pos",
  "--vocab_file=%s" % VOCAB,
  "--bert_config_file=%s" % config_file("ckpt_b"),
  "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
  "--max_seq_length=16",
  "--do_train",
  "--train_batch_size=8",
  "--num_train_epochs=20",
  "--learning_rate=1e-3",
  "--save_checkpoints_steps=0",
  "--iterations_per_loop=10",
  "--deterministic",
  "--noprogress",
  "--eval_every_steps=10",
  "--best_metric=eval_loss",
  "--best_mode=min",
  "--early_stopping_patience=2",
]


def start_run(script, output_dir, *args):
  """`python script --output_dir=... --noprogress <its base args> args...`
  in the background (see tests/helpers/processes.py to finish or kill it)."""
  return processes.start(
    script,
    "--output_dir=%s" % output_dir,
    "--noprogress",
    *_BASE.get(script, []),
    *args,
  )


def classifier_args(
  output_dir, data_dir=GLUE / "MRPC", task="MRPC", config=config_file("ckpt_b")
):
  """run_classifier flags for a few steps of the tiny model."""
  return [
    "--task_name=%s" % task,
    "--data_dir=%s" % data_dir,
    "--vocab_file=%s" % VOCAB,
    "--bert_config_file=%s" % config,
    "--max_seq_length=32",
    "--train_batch_size=2",
    "--num_train_epochs=1",
    "--save_checkpoints_steps=0",
    "--output_dir=%s" % output_dir,
    "--noprogress",
  ]


def squad_slice(folder, name, paragraphs):
  """The first `paragraphs` paragraphs of a golden SQuAD input, as JSON."""
  data = json.load(gzip.open(FIXTURES / "squad" / (name + ".json.gz")))
  article = data["data"][0]
  article["paragraphs"] = article["paragraphs"][:paragraphs]
  path = folder / (name + "_slice.json")
  path.write_text(json.dumps({"version": data["version"], "data": [article]}))
  return str(path)


def write_flipped_data(folder):
  """train: "good" -> pos, "bad" -> neg; dev: the same rows, flipped (the
  better the model learns train, the worse its dev loss: the best checkpoint
  comes early)."""
  rng = random.Random(0)
  words = "the a man woman dog city house car day night".split()
  rows = []
  for i in range(32):
    label = ("neg", "pos")[i % 2]
    text = rng.sample(words, 4)
    text.insert(rng.randrange(5), {"neg": "bad", "pos": "good"}[label])
    rows.append((" ".join(text), label))
  flip = {"neg": "pos", "pos": "neg"}
  (folder / "train.tsv").write_text("".join("%s\t%s\n" % r for r in rows))
  (folder / "dev.tsv").write_text(
    "".join("%s\t%s\n" % (text, flip[label]) for text, label in rows[:8])
  )
  (folder / "test.tsv").write_text(
    "".join("%s\t%s\n" % row for row in rows[8:12])
  )
  return folder


def tokenizer_args(tmp_path):
  """{entry point: argv that reaches its tokenizer}, without --vocab_file."""
  squad = tmp_path / "squad.json"
  squad.write_bytes(
    gzip.decompress((FIXTURES / "squad" / "small_v1.json.gz").read_bytes())
  )
  raw = tmp_path / "raw.jsonl"
  raw.write_text("")
  out = tmp_path / "out"
  model = ["--bert_config_file=" + config_file("ckpt_b"), "--vocab_file="]
  return {
    "run_classifier": [
      a for a in classifier_args(out / "c") if not a.startswith("--vocab_file")
    ]
    + ["--do_train", "--vocab_file="],
    "run_squad": model
    + [
      "--do_predict",
      "--predict_file=%s" % squad,
      "--output_dir=%s" % (out / "s"),
    ],
    "run_ner": model
    + [
      "--data_dir=%s" % (FIXTURES / "ner"),
      "--do_train",
      "--output_dir=%s" % (out / "n"),
    ],
    "run_multiple_choice": model
    + [
      "--data_dir=%s" % (FIXTURES / "swag"),
      "--do_train",
      "--output_dir=%s" % (out / "m"),
    ],
    "data_prep.squad": [
      "--input_file=%s" % squad,
      "--vocab_file=",
      "--output_file=%s" % (out / "sq.tfrecord"),
    ],
    "data_prep.squad_predictions": [
      "--predict_file=%s" % squad,
      "--raw_results_file=%s" % raw,
      "--vocab_file=",
      "--output_dir=%s" % (out / "p"),
    ],
    "data_prep.classifier": [
      "--task_name=mrpc",
      "--data_dir=%s" % (GLUE / "MRPC"),
      "--split=train",
      "--vocab_file=",
      "--output_file=%s" % (out / "c.tfrecord"),
    ],
    "data_prep.ner": [
      "--input_file=%s" % (FIXTURES / "ner" / "train.txt"),
      "--vocab_file=",
      "--output_file=%s" % (out / "n.tfrecord"),
    ],
    "data_prep.multiple_choice": [
      "--input_file=%s" % (FIXTURES / "swag" / "train.csv"),
      "--vocab_file=",
      "--output_file=%s" % (out / "m.tfrecord"),
    ],
    "data_prep.create_pretraining_data": [
      "--input_file=%s" % (REPO / "examples" / "data" / "sample_text.txt"),
      "--vocab_file=",
      "--output_file=%s" % (out / "pt.tfrecord"),
    ],
    "bert_tf.export_saved_model": [
      "--task=tfhub_preprocess",
      "--vocab_file=",
      "--export_dir=%s" % (out / "sm"),
    ],
  }
