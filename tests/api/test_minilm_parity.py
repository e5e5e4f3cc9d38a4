"""The API's evaluate equals the scripts' eval files on a real model:
all-MiniLM-L6-v2 (HuggingFace folder in ../shared) and slices of real dev
sets (MRPC, CoNLL-2003, SQuAD v1.1).

Each task gets a briefly trained head from one front door and is evaluated
by both on the same examples and weights: the classifier and SQuAD models
are fitted by the API from the HF folder and saved with `save_run`, the
script evaluates that run; the NER model is trained by run_ner.py from the
converted original checkpoint and loaded by `TokenTagger.from_pretrained`.
Counts, accuracy, F1 and EM must be equal; losses to float32 rounding.
`pytest -s` prints both sides.
"""

import json

import keras
import pytest

import bert_tf
from data_prep.ner import conll
from tests.conftest import REPO
from tests.helpers import parity
from tests.helpers import processes

SHARED = REPO.parent / "shared"
MODEL = SHARED / "models" / "all-MiniLM-L6-v2"
DATA = SHARED / "data"

pytestmark = [
  pytest.mark.slow,
  pytest.mark.process,  # trains, and runs the scripts
  pytest.mark.skipif(
    not (MODEL / "model.safetensors").is_file() or not DATA.is_dir(),
    reason="no ../shared beside the repository (all-MiniLM-L6-v2, data/)",
  ),
]

# One short schedule for every task: 2 epochs of batch 8 at 1e-4.
TRAIN = {"epochs": 2, "batch_size": 8, "learning_rate": 1e-4}
TRAIN_FLAGS = [
  "--num_train_epochs=2",
  "--train_batch_size=8",
  "--learning_rate=1e-4",
]


def _mrpc(name, count):
  """(header + first `count` rows, pairs, labels) of GLUE MRPC's `name`
  (no quoting: GLUE's TSV has bare quote characters)."""
  lines = (DATA / "glue" / "MRPC" / name).read_text("utf-8").splitlines()
  rows = [line.split("\t") for line in lines[1 : count + 1]]
  text = "\n".join(lines[: count + 1]) + "\n"
  return text, [(r[3], r[4]) for r in rows], [r[0] for r in rows]


def test_text_classifier_evaluate_is_run_classifiers_on_mrpc(tmp_path):
  _, train_x, train_y = _mrpc("train.tsv", 128)
  dev, x, y = _mrpc("dev.tsv", 128)
  keras.utils.set_random_seed(0)  # the head's start
  clf = bert_tf.TextClassifier.from_pretrained(
    str(MODEL), task_name="mrpc", max_seq_length=128
  )
  clf.fit(train_x, train_y, verbose=0, **TRAIN)
  run = clf.save_run(str(tmp_path / "run"))
  (tmp_path / "data").mkdir()
  (tmp_path / "data" / "dev.tsv").write_text(dev, "utf-8")
  # Batches of 24: the last is partial, which `loss` depends on.
  parity.run_script(
    "run_classifier.py",
    run,
    "--task_name=MRPC",
    "--do_eval",
    "--eval_batch_size=24",
    "--data_dir=%s" % (tmp_path / "data"),
    "--max_seq_length=128",
  )
  script = parity.results_txt(tmp_path / "run" / "eval_results.txt")
  api = clf.evaluate(x, y, batch_size=24)
  print(parity.side_by_side("MRPC", script, api))
  parity.assert_same_txt(script, api)
  assert script["global_step"] == "32"  # 128 pairs / 8 * 2 epochs
  assert 0 < api["eval_f1"] < 1, api


def _conll_slice(name, count, path):
  """The first `count` sentences of CoNLL-2003's `name` (with their
  -DOCSTART- lines) written to `path`."""
  blocks = (DATA / "conll2003" / name).read_text().split("\n\n")
  kept, sentences = [], 0
  for block in filter(str.strip, blocks):
    kept.append(block.strip("\n"))
    sentences += not block.startswith("-DOCSTART-")
    if sentences == count:
      break
  path.write_text("\n\n".join(kept) + "\n")
  return str(path)


@pytest.fixture(scope="module")
def ner(tmp_path_factory):
  """(script's eval_results.txt, the API's evaluate of the script's run)."""
  folder = tmp_path_factory.mktemp("minilm_ner")
  original = folder / "minilm_tf1"
  parity.convert_hf(MODEL, original)
  train = _conll_slice("train.txt", 128, folder / "train.txt")
  dev = _conll_slice("valid.txt", 64, folder / "valid.txt")
  run = folder / "run"
  # 128 sentences -> 128 windows of 64 pieces: 32 steps.
  result = processes.run(
    [
      "run_ner.py",
      "--output_dir=%s" % run,
      "--vocab_file=%s/vocab.txt" % original,
      "--bert_config_file=%s/bert_config.json" % original,
      "--init_checkpoint=%s/bert_model.ckpt" % original,
      "--noprogress",
      "--do_train",
      "--do_eval",
      "--train_file=%s" % train,
      "--eval_file=%s" % dev,
      "--labels=O,B-PER,I-PER,B-ORG,I-ORG,B-LOC,I-LOC,B-MISC,I-MISC",
      "--max_seq_length=64",
      "--seed=0",
      *TRAIN_FLAGS,
    ]
  )
  assert result.returncode == 0, result.stderr[-3000:]
  sentences = conll.read_conll(dev)
  tagger = bert_tf.TokenTagger.from_pretrained(str(run))
  api = tagger.evaluate(
    [s.words for s in sentences], [s.tags for s in sentences]
  )
  script = parity.results_txt(run / "eval_results.txt")
  print(parity.side_by_side("CoNLL-2003", script, api))
  return script, api


def test_token_tagger_evaluate_is_run_ners_on_conll(ner):
  script, api = ner
  parity.assert_same_txt(script, api)
  assert script["global_step"] == "32"
  assert 0 < api["eval_f1"] < 1, api


def test_token_tagger_of_a_run_reports_the_runs_global_step(ner):
  script, api = ner
  assert str(api["global_step"]) == script["global_step"]


def _squad_slice(articles, per_article, path):
  """(x, y) of the first question of each of the first `per_article`
  paragraphs of SQuAD v1.1 dev `articles`, with its first answer only (the
  API's label); written to `path` as a --predict_file."""
  data = json.loads((DATA / "squad" / "dev-v1.1.json").read_text())
  x, y, kept = [], [], []
  for article in data["data"][articles]:
    paragraphs = []
    for paragraph in article["paragraphs"][:per_article]:
      qa = dict(paragraph["qas"][0])
      qa["answers"] = qa["answers"][:1]
      paragraphs.append({"context": paragraph["context"], "qas": [qa]})
      x.append((qa["question"], paragraph["context"]))
      y.append((qa["answers"][0]["text"], qa["answers"][0]["answer_start"]))
    kept.append({"title": article["title"], "paragraphs": paragraphs})
  path.write_text(json.dumps({"version": "1.1", "data": kept}))
  return x, y


SQUAD_SEQUENCE = {"doc_stride": 64, "max_query_length": 32}


def test_span_extractor_evaluate_is_run_squads_on_squad_dev(tmp_path):
  # Train and dev: different articles (48 and 40 questions).
  train_x, train_y = _squad_slice(slice(8, 16), 6, tmp_path / "train.json")
  x, y = _squad_slice(slice(0, 8), 5, tmp_path / "dev.json")
  keras.utils.set_random_seed(0)
  squad = bert_tf.SpanExtractor.from_pretrained(
    str(MODEL), max_seq_length=192, **SQUAD_SEQUENCE
  )
  squad.fit(train_x, train_y, verbose=0, **TRAIN)
  run = squad.save_run(str(tmp_path / "run"))
  parity.run_script(
    "run_squad.py",
    run,
    "--do_predict",
    "--predict_file=%s" % (tmp_path / "dev.json"),
    "--max_seq_length=192",
    *("--%s=%s" % item for item in SQUAD_SEQUENCE.items()),
  )
  script = json.loads((tmp_path / "run" / "eval_results.json").read_text())
  api = squad.evaluate(x, y)
  print(parity.side_by_side("SQuAD v1.1", script, api))
  # The official metrics exactly; the API adds the loss and the step.
  assert set(api) - set(script) == {"eval_loss", "global_step"}
  assert {k: api[k] for k in script} == script
  assert len(x) == 40 and 0 < script["f1"] < 100, script
