r"""Cuts a SQuAD JSON file into article ranges, for the example scripts.

`--first_answer_only` keeps only the first gold answer of each question: the
original run_squad.py trains only on questions with exactly one answer
(SQuAD dev files list several), while evaluation wants them all.

    python -m examples.squad_slice --input_file=dev-v1.1.json \
      --output_file=train.json --articles=0:24 --first_answer_only
"""

import json

from absl import app
from absl import flags

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.io_utils import run_cli
from data_prep.squad.example import load_squad_json

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None, "SQuAD JSON to cut.")
flags.DEFINE_string("output_file", None, "Where the slice is written.")
flags.DEFINE_string(
  "articles", ":", "Python slice of the `data` list, e.g. 0:24 or 24:."
)
flags.DEFINE_bool(
  "first_answer_only", False, "Keep only the first answer of every question."
)


def _article_slice(text):
  try:
    start, stop = [int(part) if part else None for part in text.split(":")]
  except ValueError:
    raise InputError("--articles=%s: expected START:STOP" % text) from None
  return slice(start, stop)


def main(_):
  require_file(FLAGS.input_file, "input_file")
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  articles = load_squad_json(FLAGS.input_file)[_article_slice(FLAGS.articles)]
  with open(FLAGS.input_file, encoding="utf-8") as f:
    version = json.load(f).get("version")
  if FLAGS.first_answer_only:
    for article in articles:
      for paragraph in article["paragraphs"]:
        for qa in paragraph["qas"]:
          qa["answers"] = qa["answers"][:1]
  with atomic_output(FLAGS.output_file) as f:
    json.dump({"version": version, "data": articles}, f, ensure_ascii=False)
  questions = sum(len(p["qas"]) for a in articles for p in a["paragraphs"])
  print(
    "%s: %d articles, %d questions"
    % (FLAGS.output_file, len(articles), questions)
  )


if __name__ == "__main__":
  app.run(run_cli(main))
