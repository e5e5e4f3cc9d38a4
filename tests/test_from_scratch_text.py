"""examples/local_text.py and examples/from_scratch_text_curve.py on small
hand-made inputs: the documents and sentences they must write, and the
least-squares crossing worked out by hand."""

import json
import os
import subprocess
import sys

import pytest

from examples import from_scratch_text_curve
from examples import local_text

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CONLL = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O
"""

_SQUAD = {
  "data": [
    {
      "title": "A",
      "paragraphs": [
        {
          "context": "Super Bowl 50 was a game. It was played in 2016! Why? "
          "\"Because\" it was.",
          "qas": [],
        },
        {"context": "Denver won (24-10).", "qas": []},
      ],
    },
    {"title": "B", "paragraphs": [{"context": "U.S. teams play.", "qas": []}]},
  ]
}


def _write(path, text):
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return str(path)


def test_conll_documents_are_stories_of_token_sentences(tmp_path):
  path = _write(tmp_path / "train.txt", _CONLL)
  assert list(local_text.conll_documents(path)) == [
    ["EU rejects German", "Peter Blackburn"],
    ["BRUSSELS 1996-08-22"],
  ]


def test_squad_documents_are_articles_split_into_sentences(tmp_path):
  path = _write(tmp_path / "dev.json", json.dumps(_SQUAD))
  assert list(local_text.squad_documents(path)) == [
    [
      "Super Bowl 50 was a game.",
      "It was played in 2016!",
      "Why?",
      '"Because" it was.',
      "Denver won (24-10).",
    ],
    ["U.S. teams play."],  # no split: "S." is followed by a lower case word
  ]


def test_local_text_writes_a_corpus_and_refuses_a_bad_file(tmp_path):
  conll = tmp_path / "conll"
  conll.mkdir()
  for name in ("train", "valid", "test"):
    _write(conll / (name + ".txt"), _CONLL)
  squad = _write(tmp_path / "dev.json", json.dumps(_SQUAD))
  out = tmp_path / "corpus.txt"
  command = [sys.executable, "examples/local_text.py", "--conll_dir=%s" % conll]
  done = subprocess.run(
    command + ["--squad_file=" + squad, "--output_file=%s" % out],
    cwd=_REPO,
    capture_output=True,
    text=True,
    check=True,
  )
  assert "8 documents, 42 words" in done.stdout
  text = out.read_text(encoding="utf-8")
  assert text.startswith("Super Bowl 50 was a game.\nIt was played in 2016!\n")
  assert text.count("\n\n") == 8 and text.endswith("BRUSSELS 1996-08-22\n\n")

  bad = _write(tmp_path / "bad.json", "not json")
  failed = subprocess.run(
    command + ["--squad_file=" + bad, "--output_file=%s" % (tmp_path / "o")],
    cwd=_REPO,
    capture_output=True,
    text=True,
  )
  assert failed.returncode != 0
  assert len(failed.stderr.strip().splitlines()) == 1
  assert "bad.json: not a SQuAD JSON file" in failed.stderr
  assert sorted(os.listdir(tmp_path)) == [
    "bad.json",
    "conll",
    "corpus.txt",
    "dev.json",
  ]


def _run_dir(root, name, words, random_init, pretrained):
  run = root / name
  (run / "data").mkdir(parents=True)
  _write(run / "data" / "train.txt", "w " * words)
  results = {
    "pretraining_steps": 2000,
    "sst2": {"0": {"seeds": random_init}, "2000": {"seeds": pretrained}},
  }
  _write(run / "results.json", json.dumps(results))
  return str(run)


def test_text_curve_fits_the_gap_per_doubling(tmp_path, capsys):
  # Gaps of -3, -2 and -1 points at 2^10, 2^11 and 2^12 words: one point
  # per doubling, on a straight line that reaches 0 at 2^13 = 8,192 words.
  runs = [
    _run_dir(tmp_path, "a", 1024, [0.70, 0.72], [0.67, 0.69]),
    _run_dir(tmp_path, "b", 2048, [0.70, 0.72], [0.68, 0.70]),
    _run_dir(tmp_path, "c", 4096, [0.70, 0.72], [0.69, 0.71]),
  ]
  plot = tmp_path / "curve.png"
  from_scratch_text_curve.main(
    ["x", "--out_dirs=" + ",".join(reversed(runs)), "--plot=%s" % plot]
  )
  out = capsys.readouterr().out
  assert "| 1,024 | 0.710 ± 0.014 | 0.680 ± 0.014 | -3.0 points |" in out
  assert "gap = +1.00 ± 0.00 points per doubling" in out
  assert "fit: 0 at about 8,192 words" in out
  assert plot.stat().st_size > 0


def test_text_curve_takes_one_seed_and_refuses_a_missing_plot_folder(
  tmp_path, capsys
):
  runs = [
    _run_dir(tmp_path, "a", 1024, [0.70], [0.66]),
    _run_dir(tmp_path, "b", 4096, [0.70], [0.68]),
  ]
  with pytest.raises(SystemExit, match="no_such_folder/c.png: no such folder"):
    from_scratch_text_curve.main(
      [
        "x",
        "--out_dirs=" + ",".join(runs),
        "--plot=%s" % (tmp_path / "no_such_folder" / "c.png"),
      ]
    )
  from_scratch_text_curve.main(
    ["x", "--out_dirs=" + ",".join(runs), "--plot=%s" % (tmp_path / "c.png")]
  )
  out = capsys.readouterr().out
  assert "| 1,024 | 0.700 ± 0.000 | 0.660 ± 0.000 | -4.0 points |" in out
  # -4 and -2 points two doublings apart: +1 a doubling, 0 at 2^14 words.
  assert "fit: 0 at about 16,384 words" in out


def test_text_curve_refuses_an_unfinished_run(tmp_path):
  (tmp_path / "empty").mkdir()
  with pytest.raises(SystemExit, match="empty: not a finished"):
    from_scratch_text_curve.main(
      ["x", "--out_dirs=%s" % (tmp_path / "empty"), "--plot=p.png"]
    )


def test_text_curve_needs_two_amounts_of_text(tmp_path):
  runs = [
    _run_dir(tmp_path, "a", 1024, [0.70, 0.71], [0.66, 0.67]),
    _run_dir(tmp_path, "b", 1024, [0.70, 0.72], [0.68, 0.69]),
  ]
  with pytest.raises(SystemExit, match="runs on two amounts of text"):
    from_scratch_text_curve.main(
      ["x", "--out_dirs=" + ",".join(runs), "--plot=%s" % (tmp_path / "c.png")]
    )
