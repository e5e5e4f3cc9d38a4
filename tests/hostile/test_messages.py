"""Class 7 (messages that point nowhere): a full disk names the user's
--export_dir (not the hidden folder it is built in) or output file, for the
export and for every Beam driver; a "Graph execution error:" is reported by
its cause, not its preamble."""

import pytest

from bert_tf.io_utils import error_line
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
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
