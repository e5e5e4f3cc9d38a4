"""Session fixtures of the hostile suite: the flags each entry point defines
(so a table over "every command with flag X" covers a new command too) and
tiny exported SavedModels for the commands that read one."""

import json

import pytest

from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import DEFAULTS
from tests.helpers.cli import ENTRY_POINTS
from tests.helpers.cli import run_cases


@pytest.fixture(scope="session")
def defined_flags():
  """{entry point: set of the flag names it defines}."""
  entries = list(ENTRY_POINTS)
  outcomes = run_cases([(e, DEFAULTS) for e in entries])
  return {e: set(json.loads(text)) for e, (_, text) in zip(entries, outcomes)}


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory):
  """An `encoder` SavedModel of the tiny checkpoint (input `text_a`)."""
  export_dir = tmp_path_factory.mktemp("export") / "encoder"
  ((code, stderr),) = run_cases(
    [
      (
        "bert_tf.export_saved_model",
        [
          "--task=encoder",
          "--checkpoint=" + CKPT,
          "--vocab_file=" + VOCAB,
          "--max_seq_length=16",
          "--export_dir=%s" % export_dir,
        ],
      )
    ]
  )
  assert code == 0, stderr[-2000:]
  return export_dir


@pytest.fixture(scope="session")
def tfhub_export(tmp_path_factory):
  """A `tfhub_encoder` SavedModel of the tiny checkpoint (ours: it records
  its config in assets.extra/export_config.json)."""
  export_dir = tmp_path_factory.mktemp("tfhub") / "encoder"
  ((code, stderr),) = run_cases(
    [
      (
        "bert_tf.export_saved_model",
        [
          "--task=tfhub_encoder",
          "--checkpoint=" + CKPT,
          "--vocab_file=" + VOCAB,
          "--export_dir=%s" % export_dir,
        ],
      )
    ]
  )
  assert code == 0, stderr[-2000:]
  return export_dir
