"""The attention page in a real headless chromium (Debian's, driven through
chromedriver; `make browser` installs both): it loads with no console error
and no network request, its controls redraw what the maps say, and a
before/after page of a model fine-tuned above a frozen layer shows that
layer's change as exactly 0."""

import io
import types

from matplotlib import image as image_lib
import numpy as np
import pytest

from bert_tf.attention import divergence
from bert_tf.attention import page
from bert_tf.cli import attention_sources
from tests.helpers import browser as browser_lib
from tests.helpers.attention import frozen_below_layer_1
from tests.helpers.attention import PAIR_TOKENS
from tests.helpers.attention import softmax_maps
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import config_file
from tests.helpers.checkpoints import VOCAB

pytestmark = [
  pytest.mark.browser,
  pytest.mark.process,  # starts chromedriver and chromium
  pytest.mark.skipif(
    browser_lib.MISSING is not None, reason=browser_lib.MISSING or ""
  ),
]

# The drawn lines: [head, query, key, opacity] of every line in the view.
_LINES = """
return [...document.querySelectorAll(arguments[0] + ' line')].map(l => [
  +l.dataset.head, +l.dataset.q, +l.dataset.k,
  +l.getAttribute('stroke-opacity'), !l.classList.contains('off')]);
"""
_TOKENS = """
return [...document.querySelectorAll('#view text.token.q')]
  .map(t => t.textContent);
"""


@pytest.fixture(scope="module")
def browser():
  with browser_lib.Browser() as b:
    yield b


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
  """(page path, maps): one model, two inputs, 2 layers x 3 heads."""
  maps = softmax_maps(PAIR_TOKENS, [0, 1], 3, inputs=2)
  path = tmp_path_factory.mktemp("page") / "one_model.html"
  path.write_text(page.build([maps], ["synthetic"]))
  return str(path), maps


@pytest.fixture(scope="module")
def frozen_page(tmp_path_factory):
  """(page path, [inputs, layers, heads] divergence): ckpt_a before and
  after a "fine-tune" that kept the embeddings and layer 0 frozen."""
  folder = tmp_path_factory.mktemp("frozen")
  flags = types.SimpleNamespace(
    bert_config_file=config_file("ckpt_a"),
    vocab_file=VOCAB,
    do_lower_case=True,
    max_seq_length=16,
    input_file=None,
    text="The cat sat.",
    text_b="It was long",
  )
  before, after = attention_sources.from_checkpoints(
    flags, [ckpt_prefix("ckpt_a"), frozen_below_layer_1(folder)], None
  )
  per_input = divergence.head_divergence(before, after)
  path = folder / "compare.html"
  path.write_text(page.build([before, after], ["before", "after"], per_input))
  return str(path), per_input


def _expected(attentions, heads, scale=None):
  """{(head, query, key): weight} of the lines a head view must draw: the
  page's bytes (1/255) of every weight >= 0.01 (`scale=1`: `attentions`
  are those weights already)."""
  weights = attentions if scale else page.quantize(attentions) / 255
  return {
    (h, q, k): weights[h, q, k]
    for h in heads
    for q, k in zip(*np.nonzero(weights[h] >= 0.01))
  }


def _drawn(browser, where="#view"):
  return {(h, q, k): w for h, q, k, w, _ in browser.run(_LINES, where)}


def _assert_lines(drawn, expected):
  assert set(drawn) == set(expected)
  for key, weight in expected.items():
    assert abs(drawn[key] - weight) < 6e-4, key


def _assert_clean(browser, url):
  """No console error, and nothing requested but the page itself."""
  errors = [e for e in browser.log("browser") if e["level"] == "SEVERE"]
  assert not errors
  assert set(browser.requests()) <= {url.split("#")[0]}
  assert not browser.run(
    "return performance.getEntriesByType('resource').length"
  )


def test_page_loads_with_no_console_error_and_no_network_request(
  browser, synthetic, frozen_page, tmp_path
):
  # The probe sees requests: a plain page's image is one.
  (tmp_path / "dot.png").write_bytes(b"")
  (tmp_path / "probe.html").write_text(
    '<body data-ready="true"><img src="dot.png"></body>'
  )
  browser.open(str(tmp_path / "probe.html"))
  assert "file://%s" % (tmp_path / "dot.png") in browser.requests()
  for path, fragment in [
    (synthetic[0], ""),
    (synthetic[0], "#model"),
    (frozen_page[0], "#compare"),
  ]:
    url = browser.open(path, fragment)
    assert browser.run("return document.querySelectorAll('#view *').length")
    _assert_clean(browser, url)


def test_layer_selector_changes_the_drawn_lines(browser, synthetic):
  path, maps = synthetic
  browser.open(path)
  attentions = maps.examples[0].attentions
  _assert_lines(_drawn(browser), _expected(attentions[0], range(3)))
  browser.click("#layer option[value='1']")
  assert browser.run("return document.querySelector('#view svg').dataset.layer")
  _assert_lines(_drawn(browser), _expected(attentions[1], range(3)))
  assert _expected(attentions[0], range(3)) != _expected(
    attentions[1], range(3)
  )
  browser.click("#example option[value='1']")  # the second input, layer 1
  _assert_lines(
    _drawn(browser), _expected(maps.examples[1].attentions[1], [0, 1, 2])
  )


def test_the_address_opens_a_view_with_its_settings(browser, synthetic):
  path, maps = synthetic
  browser.open(path, "#head&layer=1&heads=2&input=1")
  assert browser.run("return document.getElementById('layer').value") == "1"
  _assert_lines(_drawn(browser), _expected(maps.examples[1].attentions[1], [2]))
  browser.open(path, "#head&words=1&special=0&layer=9")  # no layer 9: 0
  assert browser.run(_TOKENS) == ["the", "cats", "sat"]
  assert browser.run("return document.getElementById('merge').checked")


def test_hovering_a_token_keeps_only_its_lines(browser, synthetic):
  path, _ = synthetic
  url = browser.open(path)
  everything = browser.run(_LINES, "#view")
  browser.hover("#view text.q[data-i='2']")
  lines = browser.run(_LINES, "#view")
  shown = [(h, q, k) for h, q, k, _, visible in lines if visible]
  assert shown and {q for _, q, _ in shown} == {2}
  assert len(shown) == sum(1 for _, q, _, _, _ in everything if q == 2)
  assert browser.run(
    "return [...document.querySelectorAll('#view text.focus')]"
    ".map(t => t.textContent)"
  ) == ["cat"]
  browser.hover("#view text.k[data-i='0']")
  shown = [k for _, _, k, _, visible in browser.run(_LINES, "#view") if visible]
  assert shown and set(shown) == {0}
  browser.hover("#title")  # away: every line again
  assert all(line[4] for line in browser.run(_LINES, "#view"))
  _assert_clean(browser, url)


def _merged(weights, groups):
  """`weights` [T, T] between words: a word receives the sum over its
  pieces and gives the mean over its pieces."""
  return np.array(
    [[weights[np.ix_(q, k)].sum() / len(q) for k in groups] for q in groups]
  )


def test_heads_words_and_special_tokens(browser, synthetic):
  path, maps = synthetic
  browser.open(path)
  browser.click("#heads .swatch[data-head='1']")
  assert {h for h, _, _ in _drawn(browser)} == {0, 2}
  browser.click("#merge")
  words = ["[CLS]", "the", "cats", "[SEP]", "sat", "[SEP]"]
  assert browser.run(_TOKENS) == words
  groups = [[0], [1], [2, 3], [4], [5], [6]]
  stored = page.quantize(maps.examples[0].attentions[0]) / 255
  merged = np.stack([_merged(stored[h], groups) for h in range(3)])
  _assert_lines(_drawn(browser), _expected(merged, [0, 2], scale=1))
  browser.click("#hide-special")
  assert browser.run(_TOKENS) == ["the", "cats", "sat"]
  kept = [1, 2, 4]
  _assert_lines(
    _drawn(browser), _expected(merged[:, kept][:, :, kept], [0, 2], scale=1)
  )


def test_model_view_thumbnails_enlarge_on_click(browser, synthetic):
  path, maps = synthetic
  url = browser.open(path, "#model")
  inked = browser.run(
    "return [...document.querySelectorAll('canvas')].map(c => "
    "c.getContext('2d').getImageData(0, 0, c.width, c.height).data"
    ".filter((v, i) => i % 4 === 3 && v > 0).length)"
  )
  assert len(inked) == 2 * 3 and min(inked) > 0
  browser.click("canvas[data-layer='1'][data-head='2']")
  assert not browser.run("return document.getElementById('overlay').hidden")
  _assert_lines(
    _drawn(browser, "#overlay"), _expected(maps.examples[0].attentions[1], [2])
  )
  browser.click("#overlay")
  assert browser.run("return document.getElementById('overlay').hidden")
  _assert_clean(browser, url)


def test_frozen_layer_shows_exactly_zero_in_the_heat_map(browser, frozen_page):
  path, per_input = frozen_page
  assert (per_input[:, 0] == 0).all() and (per_input[:, 1] > 0).all()
  url = browser.open(path, "#compare")
  cells = browser.run(
    "return [...document.querySelectorAll('.heatmap td')].map(td => "
    "[+td.dataset.layer, +td.dataset.head, td.dataset.value, td.textContent])"
  )
  assert len(cells) == 2 * 4
  for layer, head, value, text in cells:
    if layer == 0:
      assert (value, text) == ("0", "0")
    else:
      assert float(value) == pytest.approx(per_input.mean(0)[1, head], 1e-12)
      assert float(value) > 0 and text != "0"
  assert browser.run(
    "return document.getElementById('unchanged').textContent"
  ).endswith("(frozen): 0")
  # The most changed head is picked, its two patterns side by side.
  top = int(np.argmax(per_input.mean(0)[1]))
  assert browser.run(
    "return [...document.querySelectorAll('.heatmap td.picked')]"
    ".map(td => [+td.dataset.layer, +td.dataset.head])"
  ) == [[1, top]]
  sides = (
    "return [...document.querySelectorAll('.pair svg')]"
    ".map(s => [s.dataset.source, s.dataset.layer])"
  )
  assert browser.run(sides) == [["0", "1"], ["1", "1"]]
  browser.click(".heatmap td[data-layer='0'][data-head='3']")
  assert "layer 0, head 3: 0 on line 0, 0 averaged" in browser.run(
    "return document.querySelector('#unchanged + .caption').textContent"
  )
  before, after = (
    _drawn(browser, ".pair figure:nth-child(%d)" % n) for n in (1, 2)
  )
  assert before == after  # a frozen head draws the same lines
  _assert_clean(browser, url)


def test_screenshot_pixels_are_non_trivial(browser, frozen_page):
  browser.open(frozen_page[0], "#compare")
  pixels = image_lib.imread(io.BytesIO(browser.screenshot()), format="png")
  assert pixels.shape[1] == 1200 and pixels.shape[0] > 600
  rgb = (pixels[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
  colours = np.unique(rgb, axis=0)
  inked = (rgb < 235).any(axis=1).mean()
  assert len(colours) > 100 and 0.03 < inked < 0.9
  # The heat map's reds are on screen.
  assert ((rgb[:, 0] > 150) & (rgb[:, 1] < 120) & (rgb[:, 2] < 120)).any()


def test_untrusted_word_pieces_are_shown_as_text(browser, tmp_path):
  hostile = [
    "[CLS]",
    "</script><script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "[SEP]",
  ]
  maps = softmax_maps(hostile, [0], 2)
  path = tmp_path / "hostile.html"
  path.write_text(page.build([maps], ["<b>x</b>"], title="t"))
  url = browser.open(str(path))
  assert browser.run("return document.title") == "t"
  assert browser.run("return document.querySelectorAll('img, b').length") == 0
  assert browser.run(_TOKENS) == hostile
  _assert_clean(browser, url)
