"""Class 7 (messages that point nowhere): a full disk names the user's
--export_dir (not the hidden folder it is built in) or output file, for the
export and for every Beam driver, and so it does for a conversion (either
format) and a download or unpacking of `fetch_model`; a "Graph execution
error:" is reported by its cause, not its preamble; learning a vocabulary
from a corpus with nothing to learn names the corpus, not SentencePiece's
source line."""

import http.server
import io
import os
import subprocess
import sys
import threading
import zipfile

import pytest

from bert_tf.io_utils import error_line
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.fetch_server import handler
from tests.helpers.fetch_server import NAME
from tests.helpers.fetch_server import tiny_model_zip
from tests.helpers.fetch_server import ZIP_PATH
from tests.helpers.filesystems import tmpfs
from tests.helpers.scripts import GLUE


@pytest.mark.process
def test_a_full_disk_names_the_users_output(tmp_path):
  with tmpfs(tmp_path / "full", "size=4k") as full:
    export_dir = full / "model"
    beam = ["--runner=DirectRunner", "--vocab_file=" + VOCAB]
    # entry point -> (argv, the output the line names)
    table = {
      "bert_tf.export_saved_model": (
        [
          "--task=encoder",
          "--checkpoint=" + CKPT,
          "--vocab_file=" + VOCAB,
          "--max_seq_length=16",
          "--export_dir=%s" % export_dir,
        ],
        "--export_dir=%s" % export_dir,
      ),
      "data_prep.classifier": (
        beam
        + [
          "--task_name=mrpc",
          "--data_dir=%s" % (GLUE / "MRPC"),
          "--split=train",
          "--max_seq_length=512",
          "--output_file=%s" % (full / "c.tfrecord"),
        ],
        str(full / "c.tfrecord"),
      ),
      "data_prep.create_pretraining_data": (
        beam
        + [
          "--input_file=%s" % (REPO / "examples" / "data" / "sample_text.txt"),
          "--dupe_factor=2",
          "--output_file=%s" % (full / "pt.tfrecord"),
        ],
        str(full / "pt.tfrecord"),
      ),
      "data_prep.ner": (
        beam
        + [
          "--input_file=%s" % (FIXTURES / "ner" / "train.txt"),
          "--output_file=%s" % (full / "n.tfrecord"),
        ],
        str(full / "n.tfrecord"),
      ),
    }
    outcomes = run_cases([(e, argv) for e, (argv, _) in table.items()])
    for (entry, (_, culprit)), outcome in zip(table.items(), outcomes):
      line = assert_one_error(outcome, culprit, name=entry)
      assert ".export-" not in line and "No space left" in line, line
    assert sorted(p.name for p in full.iterdir()) == []


def test_graph_execution_errors_are_named_by_their_cause():
  tf = pytest.importorskip("tensorflow")

  @tf.function
  def lookup(ids):
    return tf.gather(tf.zeros([10, 2]), ids)

  with pytest.raises(tf.errors.InvalidArgumentError) as e:
    lookup(tf.constant([12]))
  assert e.value.message.startswith("Graph execution error:")
  assert error_line(e.value) == (
    "InvalidArgumentError: indices[0] = 12 is not in [0, 10)"
  )


def _padded_zip(padding):
  """The tiny model's zip with one more member of `padding` bytes."""
  data, _ = tiny_model_zip(NAME)
  buffer = io.BytesIO(data)
  with zipfile.ZipFile(buffer, "a", zipfile.ZIP_DEFLATED) as zf:
    zf.writestr(NAME + "/padding.bin", padding)
  return buffer.getvalue()


@pytest.fixture
def zip_server(monkeypatch):
  """serve(zip bytes) -> base URL of a local server holding the tiny zip."""
  monkeypatch.setenv("no_proxy", "127.0.0.1")
  servers = []

  def serve(data):
    server = http.server.ThreadingHTTPServer(
      ("127.0.0.1", 0), handler({ZIP_PATH: data}, set(), [], True)
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    servers.append(server)
    return "http://127.0.0.1:%d" % server.server_port

  yield serve
  for server in servers:
    server.shutdown()
    server.server_close()


@pytest.mark.process
def test_a_full_disk_names_the_conversion_or_download(tmp_path, zip_server):
  # Incompressible: the download itself fills the disk; zeros: the zip
  # fits, its unpacked padding does not.
  big_download = zip_server(_padded_zip(os.urandom(64 << 10)))
  big_unpacked = zip_server(_padded_zip(bytes(1 << 20)))
  with (
    tmpfs(tmp_path / "full", "size=16k") as full,
    tmpfs(tmp_path / "roomy", "size=96k") as roomy,
  ):
    # name -> (argv, what the line names)
    table = {
      "convert_to_hf": (
        ["--input=" + CKPT, "--output_format=hf", "--output_dir=%s" % full],
        [str(full), "No space left on device"],
      ),
      "convert_to_tf1": (
        ["--input=" + CKPT, "--output_dir=%s" % (full / "tf1")],
        [str(full / "tf1"), "No space left on device"],
      ),
    }
    outcomes = run_cases(
      [("bert_tf.convert_checkpoint", argv) for argv, _ in table.values()]
    )
    # fetch_model takes its model names as arguments, which the in-process
    # driver does not pass: a process each.
    table.update(
      fetch_download=(
        ["--base_url=%s" % big_download, "--output_dir=%s" % full],
        ["%s.zip: No space left on device" % (full / NAME), ".part"],
      ),
      fetch_unpacking=(
        ["--base_url=%s" % big_unpacked, "--output_dir=%s" % roomy],
        ["%s: No space left on device" % (roomy / NAME)],
      ),
    )
    for name in ("fetch_download", "fetch_unpacking"):
      result = subprocess.run(
        [sys.executable, "-m", "bert_tf.fetch_model", *table[name][0], NAME],
        cwd=REPO,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
      )
      outcomes.append((result.returncode, result.stderr))
    for (name, (_, culprits)), outcome in zip(table.items(), outcomes):
      line = assert_one_error(outcome, *culprits, name=name)
      assert ".convert-" not in line and ".fetch-" not in line, line
      assert "[Errno" not in line, line
    assert not (full / "model.safetensors").exists()
    assert not (roomy / NAME).exists()


@pytest.mark.process
def test_a_corpus_with_nothing_to_learn_is_named(tmp_path):
  empty = tmp_path / "empty.txt"
  empty.write_text("\n  \n")
  long_lines = tmp_path / "long.txt"
  long_lines.write_text(("word " * 1000 + "\n") * 3)
  cases = [
    (corpus, kind, says)
    for kind in ("sentencepiece", "wordpiece")
    for corpus, says in (
      (empty, "empty or holds only blank lines"),
      (long_lines, "3 non-empty lines are all longer than the 4192 bytes"),
    )
    if not (kind == "wordpiece" and corpus == long_lines)
  ]
  outcomes = run_cases(
    [
      (
        "data_prep.learn_vocab",
        [
          "--input_file=%s" % corpus,
          "--model_type=%s" % kind,
          "--vocab_size=1200",
          "--output_file=%s" % (tmp_path / ("v_" + kind)),
        ],
      )
      for corpus, kind, _ in cases
    ]
  )
  for (corpus, kind, says), outcome in zip(cases, outcomes):
    line = assert_one_error(
      outcome, "--input_file=%s" % corpus, name="%s %s" % (kind, corpus)
    )
    assert (says if kind == "sentencepiece" else "no words to learn") in line
    assert "trainer_interface" not in line
  assert not list(tmp_path.glob("v_*"))
