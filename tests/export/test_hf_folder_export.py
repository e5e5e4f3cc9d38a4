"""export_saved_model takes a HuggingFace folder as from_pretrained does:
all-MiniLM-L6-v2's folder exported as an encoder answers raw text with
transformers' own outputs (hf_minilm_expected.npz, computed by
transformers on the same sentences). Where a checkpoint is read and no
conversion happens on the fly, the one-line error names the command that
converts the folder."""

import json
import os

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.helpers.cli import run_cases
from tests.helpers.hf_models import MINILM
from tests.helpers.hf_models import tiny_hf_model

# The sentences hf_minilm_expected.npz holds the token ids of.
_TEXTS = [
  ("The quick brown fox jumps over the lazy dog.", ""),
  ("Hello world!", "How are you doing today?"),
  ("Short one.", ""),
]


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(MINILM), reason="MiniLM not present")
def test_an_hf_folder_exports_with_transformers_outputs(tmp_path):
  export_dir = export(
    tmp_path,
    "minilm",
    "--task=encoder",
    "--checkpoint=%s" % MINILM,
    "--max_seq_length=16",
  )
  expected = np.load(FIXTURES / "encoder" / "hf_minilm_expected.npz")
  (got,) = serve(
    export_dir,
    [{"text_a": [a for a, _ in _TEXTS], "text_b": [b for _, b in _TEXTS]}],
  )
  np.testing.assert_array_equal(got["input_mask"], expected["input_mask"])
  np.testing.assert_allclose(
    got["pooled_output"], expected["pooled_output"], rtol=0, atol=1e-4
  )
  mask = expected["input_mask"].astype(bool)
  np.testing.assert_allclose(
    np.asarray(got["sequence_output"])[mask],
    expected["sequence_output"][mask],
    rtol=0,
    atol=1e-4,
  )
  assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.process
def test_model_folders_that_are_not_checkpoints_name_the_command(tmp_path):
  hf = tmp_path / "hf"
  tiny_hf_model(str(hf))
  (hf / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
  saved_model = tmp_path / "sm"
  saved_model.mkdir()
  (saved_model / "saved_model.pb").write_bytes(b"")
  run = tmp_path / "run"
  run.mkdir()
  (run / "run_config.json").write_text("{}")
  convert = (
    "directory has no TF checkpoint (a %s: convert it with `python -m "
    "bert_tf.convert_checkpoint --input_format=%s --input=%s "
    "--output_dir=DIR`)"
  )
  cases = [
    (
      "bert_tf.export_saved_model",
      [
        "--task=encoder",
        "--checkpoint=%s" % hf,
        "--do_lower_case=False",
        "--export_dir=%s" % (tmp_path / "never"),
      ],
      "--do_lower_case=False contradicts --checkpoint=%s (its "
      "tokenizer_config.json: do_lower_case=True)" % hf,
    ),
    (
      "run_classifier",
      [
        "--task_name=MRPC",
        "--do_train",
        "--data_dir=%s" % (FIXTURES / "glue" / "MRPC"),
        "--output_dir=%s" % (tmp_path / "out"),
        "--vocab_file=%s" % (FIXTURES / "encoder" / "vocab_small.txt"),
        "--bert_config_file=%s"
        % (FIXTURES / "encoder" / "ckpt_b" / "bert_config.json"),
        "--max_seq_length=32",
        "--train_batch_size=2",
        "--init_checkpoint=%s" % hf,
      ],
      "%s: " % hf + convert % ("HuggingFace model", "hf", hf),
    ),
    (
      "bert_tf.export_checkpoint",
      [
        "--model_dir=%s" % saved_model,
        "--bert_config_file=%s"
        % (FIXTURES / "encoder" / "ckpt_b" / "bert_config.json"),
        "--output_dir=%s" % (tmp_path / "never"),
      ],
      "%s: " % saved_model + convert % ("SavedModel", "tfhub", saved_model),
    ),
    (
      "bert_tf.predict",
      [
        "--export_dir=%s" % run,
        "--input_file=%s" % (FIXTURES / "encoder" / "extract_input.txt"),
        "--output_file=%s" % (tmp_path / "never.jsonl"),
      ],
      "--export_dir=%s is a model folder, not a SavedModel: export it first "
      "with `python -m bert_tf.export_saved_model --checkpoint=%s "
      "--export_dir=DIR`" % (run, run),
    ),
  ]
  outcomes = run_cases([(entry, argv) for entry, argv, _ in cases])
  for (entry, _, message), (code, stderr) in zip(cases, outcomes):
    lines = [l for l in stderr.splitlines() if l.startswith("ERROR: ")]
    assert code == 1 and lines == ["ERROR: " + message], (entry, stderr)
  assert not (tmp_path / "never").exists()
  assert not (tmp_path / "never.jsonl").exists()
