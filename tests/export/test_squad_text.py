"""In-graph SQuAD answer text (squad_text.final_text) vs the original
`get_final_text` path of data_prep, for every span of up to 8 word pieces
of contexts built to hit its quirks: pieces starting mid-word, punctuation
inside words, [UNK] pieces, accents (precomposed and combining), NBSP and
other spaces, control characters, CJK, repeated words (find() takes the
first), and runs of whitespace."""

import pytest
import tensorflow as tf

from bert_tf.export import squad_spans
from bert_tf.export import squad_text
from bert_tf.export.base import vocab_tokens
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer
from data_prep.squad import postprocess
from data_prep.squad.example import split_context
from tests.conftest import FIXTURES

pytestmark = pytest.mark.process  # trains or exports end to end in this process

VOCAB = str(FIXTURES / "encoder" / "vocab_small.txt")
CONTEXTS = [
  "The Broncos (1990s) defeated the Carolina Panthers, 24–10, in 2016.",
  "Paris paris PARIS: Café, café and cafe\u0301 unwanted,running!",
  "He said \u201cno\u201d\u00a0twice\u2009and left.  Tab\there\u202fthere",
  "zero\u200bwidth, soft\u00adhyphen and \x07bell; \u5317\u4eac\u5e02 "
  "abc\u4e2dxyz",
  "x\u00bdy \u2167 \uff21\uff22 ﬁne Straße İstanbul ΣΑΣ Ⅻ.",
  "supercalifragilisticexpialidocious " * 2 + "a-b-c d.e.f",
]


def _python_answers(context, tokenizer, do_lower_case, spans):
  words = split_context(context)
  tokens, token_words = [], []
  for i, word in enumerate(words):
    for piece in tokenizer.tokenize(word):
      tokens.append(piece)
      token_words.append(i)
  answers = []
  for first, last in spans:
    tok_text = " ".join(tokens[first : last + 1])
    tok_text = tok_text.replace(" ##", "").replace("##", "")
    tok_text = " ".join(tok_text.strip().split())
    orig_text = " ".join(words[token_words[first] : token_words[last] + 1])
    answers.append(
      postprocess.get_final_text(tok_text, orig_text, do_lower_case)
    )
  return len(tokens), answers


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_every_short_span_matches_get_final_text(do_lower_case):
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case)
  tf_tokenizer = TfTextTokenizer(VOCAB, do_lower_case)
  tokens = tf.constant(vocab_tokens(VOCAB))
  checked = 0
  for context in CONTEXTS:
    num_tokens = len(
      [p for w in split_context(context) for p in tokenizer.tokenize(w)]
    )
    spans = [
      (s, e)
      for s in range(num_tokens)
      for e in range(s, min(s + 8, num_tokens))
    ]
    _, want = _python_answers(context, tokenizer, do_lower_case, spans)
    contexts = tf.constant([context] * len(spans))
    doc = squad_spans.split_context(contexts, tf_tokenizer)
    first = tf.constant([s for s, _ in spans], tf.int64)
    last = tf.constant([e for _, e in spans], tf.int64)
    text, start, end = squad_text.final_text(
      doc, first, last, tokens, do_lower_case
    )
    got = [t.decode("utf-8") for t in text.numpy()]
    assert got == want, context
    for answer, s, e in zip(got, start.numpy(), end.numpy()):
      assert " ".join(split_context(context[s:e])) == answer
    checked += len(spans)
  assert checked > 500
