"""The page as a file: self-contained (no URL to fetch), its data the maps to
1/255, untrusted word pieces kept as data, only its own script allowed to
run (the browser tests, test_page_browser.py, load it in chromium)."""

import base64
import hashlib
import json
import re
import zlib

import numpy as np

from bert_tf.attention import divergence
from bert_tf.attention import page
from tests.helpers.attention import PAIR_TOKENS
from tests.helpers.attention import softmax_maps


def _parts(text):
  """(the JSON data, the inline script, the Content-Security-Policy)."""
  data = re.search(
    r'<script id="attention-data" type="application/json">(.*?)</script>',
    text,
    re.S,
  ).group(1)
  script = re.findall(r"<script>(.*?)</script>", text, re.S)
  policy = re.search(
    r'http-equiv="Content-Security-Policy" content="([^"]*)"', text
  )
  return json.loads(data), script, policy.group(1)


def test_the_page_carries_the_maps_and_divergences():
  before = softmax_maps(PAIR_TOKENS, [0, 1], 3, inputs=2, source="pre")
  after = softmax_maps(PAIR_TOKENS, [0, 1], 3, inputs=2, seed=9, source="ft")
  per_input = divergence.head_divergence(before, after)
  text = page.build([before, after], ["pre", "ft"], per_input, title="T")
  data, _, _ = _parts(text)
  assert data["title"] == "T" and data["sources"] == ["pre", "ft"]
  assert data["layers"] == ["0", "1"] and data["heads"] == 3
  assert data["divergence"]["mean"] == per_input.mean(0).tolist()
  assert data["divergence"]["inputs"] == per_input.tolist()
  for n, example in enumerate(data["examples"]):
    assert example["tokens"] == PAIR_TOKENS
    assert example["segments"] == [0, 0, 0, 0, 0, 1, 1]
    for maps, blob in zip([before, after], example["maps"]):
      raw = np.frombuffer(zlib.decompress(base64.b64decode(blob)), np.uint8)
      stored = raw.reshape(2, 3, 7, 7) / 255
      np.testing.assert_allclose(
        stored, maps.examples[n].attentions, atol=0.5 / 255 + 1e-7
      )


def test_the_page_fetches_nothing_and_runs_only_its_script():
  maps = softmax_maps(PAIR_TOKENS, [0], 2)
  text = page.build([maps], ["model"])
  # No address to load: no src, no http(s), the icon an empty data: URL.
  assert not re.search(r"\bsrc=|https?://(?!www\.w3\.org/2000/svg)", text)
  assert re.findall(r'href="([^"]*)"', text) == ["data:,"]
  data, scripts, policy = _parts(text)
  assert data["divergence"] is None and len(scripts) == 1
  sha = hashlib.sha256(scripts[0].encode()).digest()
  assert policy.startswith(
    "default-src 'none'; script-src 'sha256-%s';"
    % base64.b64encode(sha).decode()
  )


def test_untrusted_word_pieces_stay_data():
  hostile = [
    "</script><script>document.title='pwned'</script>",
    "<img src=x onerror=alert(1)>",
    "<!--",
  ]
  maps = softmax_maps(hostile, [0], 1)
  maps.examples[0].name = "</title><script>x</script>"
  text = page.build([maps], ["<b>model</b>"], title="<i>t</i>")
  assert text.count("<script") == 2 and text.count("</script>") == 2
  assert "<img" not in text and "<b>" not in text
  assert "<title>&lt;i&gt;t&lt;/i&gt;</title>" in text
  data, _, _ = _parts(text)
  assert data["examples"][0]["tokens"] == hostile
  assert data["sources"] == ["<b>model</b>"]
