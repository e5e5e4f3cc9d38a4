r"""Fine-tunes all-MiniLM-L6-v2 on a few hundred SST-2 sentences from
Python, the Keras way: validation data scored every epoch, EarlyStopping,
one line per epoch, a History back. Then saves the run and evaluates it.

    python examples/api_fit_sst2.py > fit.log
    python examples/api_fit_sst2.py --model=path/to/model --train=640 \
      --output_dir=out/api_fit_sst2 > fit.log

The epoch lines (verbose=2) and the prints below go to stdout, TensorFlow's
messages to stderr. The training is run_classifier.py's: the same run with
`--task_name=SST-2 --max_seq_length=64 --train_batch_size=16
--eval_batch_size=16 --learning_rate=5e-5 --num_train_epochs=3 --seed=1
--eval_every_epochs=1 --best_metric=eval_accuracy
--early_stopping_patience=1` gives the same numbers
(tests/api/test_minilm_fit.py), and the script reads the saved run folder.
"""

import argparse
import pathlib
import sys

import keras

import bert_tf
from bert_tf.io_utils import run_cli

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

MAX_SEQ_LENGTH = 64
SEED = 1
TRAINING = {"epochs": 3, "batch_size": 16, "learning_rate": 5e-5}


def sst2(path, count):
  """(sentences, labels) of the first `count` rows of a GLUE SST-2 TSV."""
  with open(path, encoding="utf-8") as f:
    rows = [line.rstrip("\n").split("\t") for line in f][1 : count + 1]
  return [r[0] for r in rows], [r[1] for r in rows]


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--model", default=SHARED / "models/all-MiniLM-L6-v2")
  parser.add_argument("--glue_dir", default=SHARED / "data/glue")
  parser.add_argument("--train", type=int, default=320, help="sentences")
  parser.add_argument("--dev", type=int, default=200, help="sentences")
  parser.add_argument("--output_dir", default="out/api_fit_sst2")
  args = parser.parse_args(argv[1:])
  if pathlib.Path(args.output_dir).exists():  # before, not after, training
    parser.error("--output_dir=%s already exists" % args.output_dir)

  x, y = sst2(pathlib.Path(args.glue_dir, "SST-2", "train.tsv"), args.train)
  dev_x, dev_y = sst2(pathlib.Path(args.glue_dir, "SST-2", "dev.tsv"), args.dev)

  # The new head's weights and the dropout seeds are drawn as the model is
  # built; fit's seed= (the script's --seed) then seeds the data order.
  keras.utils.set_random_seed(SEED)
  clf = bert_tf.TextClassifier.from_pretrained(
    str(args.model), task_name="sst-2", max_seq_length=MAX_SEQ_LENGTH
  )
  # Stop once dev accuracy has not improved for an epoch.
  stop = keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=1)
  history = clf.fit(
    x,
    y,
    validation_data=(dev_x, dev_y),
    callbacks=[stop],
    verbose=2,
    seed=SEED,
    **TRAINING,
  )
  print("history:", history.history)
  print("run:", clf.save_run(args.output_dir))
  batch_size = TRAINING["batch_size"]
  print("dev:", clf.evaluate(dev_x, dev_y, batch_size=batch_size))


if __name__ == "__main__":
  run_cli(main)(sys.argv)  # a bad input or model: one ERROR line
