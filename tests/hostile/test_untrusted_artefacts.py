"""Class 9 (untrusted artefacts): a model folder someone else made is read
through one reader (`bert_tf/checkpoints/artefact.py`). A path it names may
not lead out of it (`..`, an absolute name, a symlink); its config is
checked for type, range and the arrays it describes before anything is
built; a damaged file is one line naming it. Run against
`convert_checkpoint` (TF Hub, HF, original layout) and `export_saved_model`,
each case ends in one `ERROR:` line and leaves no output, and no byte of the
planted secret anywhere."""

import pytest

from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.hostile import artefacts as a

pytestmark = pytest.mark.process  # starts programs


def _convert(folder, input_format, out, *more):
  return (
    "bert_tf.convert_checkpoint",
    [
      "--input=%s" % folder,
      "--input_format=%s" % input_format,
      "--output_dir=%s" % out,
    ]
    + list(more),
  )


def _escapes(tmp_path, tfhub_export, secret):
  """name -> (folder, --input_format, --input's suffix, the path named)."""
  t = tmp_path
  cases = {}
  folder = a.tfhub_copy(t / "dot_dot")
  a.set_asset_name(folder, "../../secret.txt")
  cases["tfhub_asset_dot_dot"] = (folder, "tfhub", "", "'assets/../../secret")
  folder = a.tfhub_copy(t / "absolute")
  a.set_asset_name(folder, str(secret))
  cases["tfhub_asset_absolute"] = (folder, "tfhub", "", repr(str(secret)))
  folder = a.tfhub_copy(t / "asset_link")
  cases["tfhub_asset_symlink"] = (
    folder,
    "tfhub",
    "",
    a.link_out(a.only_asset(folder), secret),
  )
  folder = a.tfhub_copy(t / "variables_link")
  cases["tfhub_variables_symlink"] = (
    folder,
    "tfhub",
    "",
    a.link_out(folder / "variables", a.GOLDEN_TFHUB / "variables"),
  )
  folder = a.tfhub_copy(t / "metadata_link", tfhub_export)
  outside = t / "export_config.json"
  outside.write_bytes(folder.joinpath(*a.METADATA).read_bytes())
  cases["tfhub_metadata_symlink"] = (
    folder,
    "tfhub",
    "",
    a.link_out(folder.joinpath(*a.METADATA), outside),
  )
  for name in ("vocab.txt", "config.json", "model.safetensors"):
    folder = a.hf_folder(t / ("hf_" + name))
    outside = t / ("outside_" + name)
    outside.write_bytes((folder / name).read_bytes())
    target = secret if name == "vocab.txt" else outside
    cases["hf_%s_symlink" % name] = (
      folder,
      "hf",
      "",
      a.link_out(folder / name, target),
    )
  for name in ("vocab.txt", "bert_config.json", "bert_model.ckpt.index"):
    folder = a.tf1_folder(t / ("tf1_" + name))
    outside = t / ("outside_tf1_" + name)
    outside.write_bytes((folder / name).read_bytes())
    target = secret if name == "vocab.txt" else outside
    cases["tf1_%s_symlink" % name] = (
      folder,
      "tf1",
      "/bert_model.ckpt",
      a.link_out(folder / name, target),
    )
  return cases


def test_no_path_an_artefact_names_leads_out_of_it(tmp_path, tfhub_export):
  secret = a.plant_secret(tmp_path)
  cases = _escapes(tmp_path, tfhub_export, secret)
  snapshot = a.hf_cache_snapshot(tmp_path / "cache")
  outcomes = run_cases(
    [
      _convert(str(folder) + suffix, kind, tmp_path / ("out_" + name))
      for name, (folder, kind, suffix, _) in cases.items()
    ]
    + [_convert(snapshot, "hf", tmp_path / "out_snapshot")]
  )
  for (name, (_, _, _, named)), outcome in zip(cases.items(), outcomes):
    line = assert_one_error(outcome, str(named), name=name)
    assert "out of" in line, (name, line)
    assert not (tmp_path / ("out_" + name) / "vocab.txt").exists(), name
    assert not (tmp_path / ("out_" + name) / "checkpoint").exists(), name
  # A HuggingFace cache snapshot's links into its own blobs/ are followed.
  assert outcomes[-1][0] == 0, outcomes[-1][1][-2000:]
  assert (tmp_path / "out_snapshot" / "vocab.txt").read_bytes() == (
    snapshot / "vocab.txt"
  ).read_bytes()
  for path in tmp_path.rglob("*"):
    if path.is_file() and path != secret and not path.is_symlink():
      assert a.SECRET.encode() not in path.read_bytes(), path


def _damaged(tmp_path, tfhub_export):
  """name -> (convert argv parts, what the line must name)."""
  t = tmp_path
  cases = {}
  folder = a.tfhub_copy(t / "random_pb")
  (folder / "saved_model.pb").write_bytes(bytes(range(256)) * 20)
  cases["tfhub_saved_model_pb_random"] = (
    (folder, "tfhub"),
    [str(folder / "saved_model.pb"), "not a SavedModel"],
  )
  folder = a.tfhub_copy(t / "cut")
  data = a.cut_in_half(folder / "variables" / "variables.data-00000-of-00001")
  cases["tfhub_variables_cut_in_half"] = (
    (folder, "tfhub"),
    [str(data), "cut short"],
  )
  folder = a.tfhub_copy(t / "index")
  (folder / "variables" / "variables.index").write_bytes(b"\x00" * 64)
  cases["tfhub_variables_index_garbled"] = (
    (folder, "tfhub"),
    [str(folder / "variables" / "variables.index")],
  )
  edits = {
    "not_json": (None, "not JSON"),
    "no_bert_config": (lambda m: m.pop("bert_config"), "no 'bert_config'"),
    "hidden_size_contradicts_arrays": (
      lambda m: m["bert_config"].update(hidden_size=64),
      "word_embeddings is [3000, 32], but the config makes it [3000, 64]",
    ),
    "layers_contradict_arrays": (
      lambda m: m["bert_config"].update(num_hidden_layers=2),
      "1 encoder layers, but the config's num_hidden_layers is 2",
    ),
    "hidden_size_huge": (
      lambda m: m["bert_config"].update(hidden_size=10**9),
      "'hidden_size' must be in [1, 16384], got 1000000000",
    ),
  }
  for name, (change, says) in edits.items():
    folder = a.tfhub_copy(t / ("metadata_" + name), tfhub_export)
    path = folder.joinpath(*a.METADATA)
    if change is None:
      path.write_text('{"bert_config": ')
    else:
      a.edit_metadata(folder, change)
    cases["tfhub_export_config_" + name] = (
      (folder, "tfhub"),
      [str(path), says],
    )
  folder = a.tfhub_copy(t / "long_vocab", tfhub_export)
  vocab = a.long_vocab(a.only_asset(folder))
  cases["tfhub_vocab_asset_over_the_embedding"] = (
    (folder, "tfhub"),
    [str(vocab), "30522 tokens, more than the model's vocab_size 3000"],
  )
  folder = a.hf_folder(t / "hf_long_vocab")
  a.long_vocab(folder / "vocab.txt")
  cases["hf_vocab_over_the_embedding"] = (
    (folder, "hf"),
    [str(folder / "vocab.txt"), "more than the model's vocab_size 20"],
  )
  folder = a.tf1_folder(t / "tf1_long_vocab")
  a.long_vocab(folder / "vocab.txt")
  cases["tf1_vocab_over_the_embedding"] = (
    (str(folder / "bert_model.ckpt"), "tf1"),
    [str(folder / "vocab.txt"), "more than the model's vocab_size 3000"],
  )
  return cases


def test_damaged_or_lying_artefacts_are_one_line(tmp_path, tfhub_export):
  cases = _damaged(tmp_path, tfhub_export)
  no_unk = tmp_path / "no_unk.txt"
  no_unk.write_text(
    "".join(
      w + "\n"
      for w in open(VOCAB, encoding="utf-8").read().splitlines()
      if w != "[UNK]"
    )
  )
  preprocess = (
    "bert_tf.export_saved_model",
    [
      "--task=tfhub_preprocess",
      "--vocab_file=%s" % no_unk,
      "--export_dir=%s" % (tmp_path / "pre"),
    ],
  )
  outcomes = run_cases(
    [
      _convert(*parts, tmp_path / ("out_" + name))
      for name, (parts, _) in cases.items()
    ]
    + [preprocess]
  )
  for (name, (_, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
    assert not (tmp_path / ("out_" + name) / "checkpoint").exists(), name
  assert_one_error(outcomes[-1], str(no_unk), "no [UNK]", name="preprocess")
  assert not (tmp_path / "pre").exists()
