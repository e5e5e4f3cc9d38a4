"""The .npz reader: what extract_features.py writes is read back as written;
a damaged, mislabelled or tampered file is one InputError naming it, and
pickled objects in it are never loaded."""

import numpy as np
import pytest

from bert_tf.attention import maps as maps_lib
from bert_tf.io_utils import InputError
from tests.helpers.attention import PAIR_TOKENS
from tests.helpers.attention import softmax_maps
from tests.helpers.attention import softmax_rows
from tests.helpers.attention import write_npz


def _maps():
  return softmax_maps(PAIR_TOKENS, layers=[-1, 0], heads=3, inputs=2)


@pytest.fixture
def maps():
  return _maps()


def test_reads_every_line_as_written(tmp_path, maps):
  path = write_npz(tmp_path / "a.npz", maps)
  read = maps_lib.read_npz(path)
  assert read.layers == [-1, 0] and read.num_heads == 3
  assert [e.name for e in read.examples] == ["line 0", "line 1"]
  for got, want in zip(read.examples, maps.examples):
    assert got.tokens == PAIR_TOKENS
    assert got.segments == [0, 0, 0, 0, 0, 1, 1]
    np.testing.assert_array_equal(got.attentions, want.attentions)
  assert [read.layer_name(i) for i in range(2)] == ["last", "0"]
  assert maps_lib.read_npz(path, lines=[1]).examples[0].name == "line 1"


def test_bfloat16_rounding_and_float16_are_accepted(tmp_path, maps):
  rows = maps.examples[0].attentions.astype(np.float16)
  rows[..., 0] += np.float16(0.004)  # rows summing to ~1.004
  path = write_npz(tmp_path / "a.npz", maps, line_0_attentions=rows)
  read = maps_lib.read_npz(path, lines=[0])
  assert read.examples[0].attentions.dtype == np.float32


def _tampered(maps):
  """{case: (extra arrays, what the error says)}."""
  good = maps.examples[0].attentions
  nan, seven, negative = good.copy(), good.copy(), good.copy()
  nan[0, 1, 2, 3] = np.nan
  seven[1, 0, 0, 0] = 7.0
  negative[0, 0, 1, 1] = -0.2
  return {
    "wrong rank": ({"line_0_attentions": good[0]}, "[3, 7, 7]"),
    "fewer layers than named": (
      {"line_0_attentions": good[:1]},
      "1 layers of attentions, but it names 2",
    ),
    "wrong length": (
      {"line_0_attentions": softmax_rows((2, 3, 6, 6))},
      "do not match its 7 tokens",
    ),
    "NaN": ({"line_0_attentions": nan}, "NaN"),
    "above 1": ({"line_0_attentions": seven}, ", 7], not probabilities"),
    "negative": ({"line_0_attentions": negative}, "not probabilities"),
    "rows not softmax": (
      {"line_0_attentions": np.full((2, 3, 7, 7), 0.1, np.float32)},
      "sums to 0.7",
    ),
    "integer maps": (
      {"line_0_attentions": good.astype(np.int64)},
      "expected float attentions",
    ),
    "layers not integers": ({"layers": np.array([0.5, 1.0])}, "`layers`"),
    "layers repeated": ({"layers": np.array([0, 0])}, "repeats a layer"),
    "tokens not text": (
      {"line_0_tokens": np.arange(7)},
      "line_0_tokens must be a list of word pieces",
    ),
  }


@pytest.mark.parametrize("case", list(_tampered(_maps())))
def test_tampered_maps_are_refused_naming_the_file(tmp_path, maps, case):
  extra, says = _tampered(maps)[case]
  path = write_npz(tmp_path / "a.npz", maps, **extra)
  with pytest.raises(InputError) as e:
    maps_lib.read_npz(path)
  assert str(e.value).startswith("--attentions_file=%s" % path)
  assert says in str(e.value)


class _Planted:
  """Unpickling this creates `marker`: proof that a pickle was loaded."""

  def __init__(self, marker):
    self.marker = marker

  def __reduce__(self):
    return (open, (self.marker, "w"))


def test_pickled_objects_are_never_loaded(tmp_path, maps):
  marker = tmp_path / "unpickled"
  planted = np.empty(7, dtype=object)
  planted[:] = [_Planted(str(marker))] * 7
  path = write_npz(tmp_path / "a.npz", maps, line_0_tokens=planted)
  with pytest.raises(InputError, match="unreadable .*allow_pickle=False"):
    maps_lib.read_npz(path)
  assert not marker.exists()


def test_damaged_files_are_one_line(tmp_path, maps):
  write_npz(tmp_path / "good.npz", maps)
  good = (tmp_path / "good.npz").read_bytes()
  cases = {
    "empty": b"",
    "random bytes": bytes(range(256)) * 4,
    "cut in half": good[: len(good) // 2],
  }
  for name, raw in cases.items():
    damaged = tmp_path / ("%s.npz" % name.replace(" ", "_"))
    damaged.write_bytes(raw)
    with pytest.raises(InputError) as e:
      maps_lib.read_npz(str(damaged), flag="compare_attentions_file")
    message = str(e.value)
    assert message.startswith("--compare_attentions_file=%s: " % damaged), name
    assert "\n" not in message


def test_missing_parts_are_named(tmp_path, maps):
  path = write_npz(tmp_path / "a.npz", maps)
  with pytest.raises(InputError, match="no line 7"):
    maps_lib.read_npz(path, lines=[7])
  np.savez(tmp_path / "bare.npz", line_0_tokens=np.array(PAIR_TOKENS))
  with pytest.raises(InputError, match="no `layers` array"):
    maps_lib.read_npz(str(tmp_path / "bare.npz"))
  np.savez(tmp_path / "none.npz", layers=np.array([0]))
  with pytest.raises(InputError, match="holds no line"):
    maps_lib.read_npz(str(tmp_path / "none.npz"))
  mixed = write_npz(
    tmp_path / "mixed.npz", maps, line_1_attentions=softmax_rows((2, 4, 7, 7))
  )
  with pytest.raises(InputError, match="different numbers of heads"):
    maps_lib.read_npz(mixed)


def test_oversized_members_are_refused_before_reading(
  tmp_path, maps, monkeypatch
):
  path = write_npz(tmp_path / "a.npz", maps)
  monkeypatch.setattr(maps_lib, "_MAX_MEMBER_BYTES", 1000)
  with pytest.raises(InputError, match="too large for an attention map"):
    maps_lib.read_npz(path)


def test_comparisons_need_the_same_inputs_layers_and_heads(maps):
  same = softmax_maps(PAIR_TOKENS, [-1, 0], 3, inputs=2, seed=5, source="b")
  maps_lib.check_comparable(maps, same)
  cases = {
    "different layers": softmax_maps(PAIR_TOKENS, [0, 1], 3, 2),
    "have 3 and 4 heads": softmax_maps(PAIR_TOKENS, [-1, 0], 4, 2),
    "hold 2 and 1 lines": softmax_maps(PAIR_TOKENS, [-1, 0], 3, 1),
    "different word pieces": softmax_maps(PAIR_TOKENS[::-1], [-1, 0], 3, 2),
  }
  for says, other in cases.items():
    with pytest.raises(InputError, match=says):
      maps_lib.check_comparable(maps, other)
