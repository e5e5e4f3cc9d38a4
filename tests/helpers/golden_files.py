"""Reads the golden text files the original code wrote (tests/fixtures)."""

import gzip
import json


def read_lines(path):
  """Golden-input rule: bytes -> UTF-8 -> split on "\\n" only."""
  opener = gzip.open if str(path).endswith(".gz") else open
  with opener(path, "rb") as f:
    lines = f.read().decode("utf-8").split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  return lines


def read_jsonl(path):
  return [json.loads(line) for line in read_lines(path)]
