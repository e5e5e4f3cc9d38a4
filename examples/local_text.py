r"""More pre-training text from files on disk, for examples/from_scratch.sh.

Writes a corpus in create_pretraining_data's format (one sentence a line, a
blank line between documents) from two sources that are not SST-2:

- SQuAD v1.1 dev's Wikipedia paragraphs, one document per article, split
  into sentences at ". ", "! " or "? " before a capital letter or quote;
- CoNLL-2003's Reuters stories, one document per `-DOCSTART-`, a sentence's
  tokens joined by spaces.

Together about 555,000 words, as much again as the shared 3 MB corpus
(docs/pretraining.md, "How much text would"):

    python examples/local_text.py --output_file=/tmp/local_text.txt
    EXTRA_TEXT=/tmp/local_text.txt bash examples/from_scratch.sh
"""

import argparse
import json
import os
import re
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SHARED = os.path.join(_REPO, "..", "shared", "data")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def squad_documents(path):
  """[[sentence]] per article of a SQuAD file."""
  with open(path, encoding="utf-8") as f:
    articles = json.load(f)["data"]
  for article in articles:
    yield [
      s.strip()
      for p in article["paragraphs"]
      for s in _SENTENCE_END.split(p["context"])
      if s.strip()
    ]


def conll_documents(path):
  """[[sentence]] per -DOCSTART- story of a CoNLL-2003 file."""
  document, sentence = [], []
  with open(path, encoding="utf-8") as f:
    for line in f:
      token = line.split()[0] if line.strip() else None
      if token == "-DOCSTART-" or token is None:
        if sentence:
          document.append(" ".join(sentence))
        sentence = []
        if token == "-DOCSTART-" and document:
          yield document
          document = []
      else:
        sentence.append(token)
  if sentence:
    document.append(" ".join(sentence))
  if document:
    yield document


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument(
    "--squad_file", default=os.path.join(_SHARED, "squad", "dev-v1.1.json")
  )
  parser.add_argument(
    "--conll_dir",
    default=os.path.join(_SHARED, "conll2003"),
    help="train, valid and test.txt",
  )
  parser.add_argument("--output_file", required=True)
  args = parser.parse_args(argv[1:])
  sources = [(args.squad_file, squad_documents, "SQuAD JSON")] + [
    (os.path.join(args.conll_dir, name + ".txt"), conll_documents, "CoNLL")
    for name in ("train", "valid", "test")
  ]
  documents = words = 0
  tmp = args.output_file + ".tmp"
  try:
    with open(tmp, "w", encoding="utf-8") as out:
      for path, read, kind in sources:
        try:
          for document in read(path):
            out.write("\n".join(document) + "\n\n")
            documents += 1
            words += sum(len(s.split()) for s in document)
        except (ValueError, KeyError, TypeError) as e:
          raise OSError("%s: not a %s file (%r)" % (path, kind, e)) from e
  except OSError as e:
    if os.path.exists(tmp):
      os.remove(tmp)
    sys.exit("ERROR: %s" % e)
  os.replace(tmp, args.output_file)
  print("%d documents, %d words -> %s" % (documents, words, args.output_file))


if __name__ == "__main__":
  main(sys.argv)
