"""`remove_temps`: a job's temps and the partial files of their killed
writers go; other files stay; local and remote (TF's ram:// filesystem)."""

from bert_tf.io_utils import gfile
from data_prep.common.outputs import remove_temps
from data_prep.common.outputs import temp_name


def test_local_temps_and_their_partials_go(tmp_path):
  temps = [temp_name(str(tmp_path / ("o-%05d-of-00003" % i))) for i in range(3)]
  (tmp_path / "o-00000-of-00003.tmp-shard").write_text("finished")
  (tmp_path / "o-00001-of-00003.tmp-shard.tmp-0123abcd").write_text("half")
  kept = [
    "o-00001-of-00003",  # a final name
    "o-00001-of-00003.tmp-shard.tmp-notours",
    "o-00002-of-00003.tmp-shard.bak",
    "p-00000-of-00003.tmp-shard",
  ]
  for name in kept:
    (tmp_path / name).write_text("the user's")
  remove_temps(temps)  # the third temp was never written
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_remote_temps_go():
  temps = ["ram://outputs_test/o-%05d-of-00002.tmp-shard" % i for i in (0, 1)]
  with gfile().GFile(temps[0], "w") as f:
    f.write("finished")
  remove_temps(temps)
  assert not gfile().exists(temps[0]) and not gfile().exists(temps[1])
