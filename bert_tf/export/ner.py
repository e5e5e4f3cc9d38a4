r"""NER SavedModel: raw text -> run_ner.py's tag per word, and entity spans.

Signatures:
* `serving_default`: `text` [batch] strings, split into words at white
  space as Python's `str.split()` does (bytes that are not UTF-8 dropped
  first).
* `tag_words`: `words` [batch, max_words] strings, one word an entry; ""
  entries are padding and are skipped.

Outputs of both ([batch, ...] padded, a length output per group):
  `words`, `tags`      [batch, max_words] string ("" padding), `num_words`;
  `entity_type`, `entity_text` [batch, max_entities] string,
  `entity_start`, `entity_end` [batch, max_entities] int32 (the first word
  and the word after the last, -1 padding), `num_entities`.
Word indices are positions in the split text, or columns of `words`.
Entities are IOB2 chunks as seqeval / conlleval count them.

Inside the graph each word is word-pieced on its own (at most
max_seq_length - 2 pieces, [UNK] if nothing is left), and a sentence is cut
into run_ner.py's overlapping windows (data_prep/ner/features.py), each
word predicted from its first piece in its max-context window, so the tags
equal test_predictions.txt of a run with the same max_seq_length. A row is
one sentence; with `--document_context` the rows of a request are the
sentences of one document, in order, and fill each other's windows as
context, as run_ner.py --document_context does within a document.

Example:
    python -m bert_tf.export_saved_model --task=ner \
      --checkpoint=/tmp/ner_output \
      --labels_file=/tmp/ner_output/label_list.txt \
      --bert_config_file=bert_config.json --vocab_file=vocab.txt \
      --do_lower_case=False --max_seq_length=128 --export_dir=/tmp/ner_sm
"""

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.export import register_exporter
from bert_tf.export.base import Exporter
from bert_tf.export.base import LABELS
from bert_tf.export.base import LABELS_FILE
from bert_tf.export.base import Option
from bert_tf.export.base import read_labels_file
from bert_tf.export.base import vocab_tokens
from bert_tf.export.base import WINDOWS_PER_CALL
from bert_tf.export.ner_windows import entities
from bert_tf.export.ner_windows import sentence_windows
from bert_tf.io_utils import InputError
from bert_tf.tasks.ner import check_feature_mode
from bert_tf.tasks.ner import NerModel

# The code points Python's str.split() splits on.
_PY_SPACE = (
  r"[\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
  r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+"
)
_WINDOW = tf.RaggedTensorSpec([None], tf.int32, ragged_rank=0)


def _padded(outputs):
  """Ragged outputs padded: "" for strings, -1 for numbers."""
  return {
    k: v.to_tensor("" if v.dtype == tf.string else -1)
    if isinstance(v, tf.RaggedTensor)
    else v
    for k, v in outputs.items()
  }


@register_exporter("ner")
class NerExporter(Exporter):
  """`run_ner.py`'s model and windows over raw text."""

  INPUTS = ("text",)
  OPTIONS = (
    LABELS,
    LABELS_FILE,
    Option("feature_mode", "fine_tune", "ner: the run's --feature_mode."),
    Option("lstm_units", 768, "ner: the run's --lstm_units (feature modes)."),
    Option(
      "document_context",
      False,
      "ner: the rows of a request are "
      "the sentences of one document, in order, and fill each "
      "other's windows as context (as run_ner.py "
      "--document_context).",
    ),
    WINDOWS_PER_CALL,
  )
  PADDED_OUTPUTS = {
    "words": "num_words",
    "tags": "num_words",
    "entity_type": "num_entities",
    "entity_text": "num_entities",
    "entity_start": "num_entities",
    "entity_end": "num_entities",
  }

  def resolve_options(self, options):
    if bool(options["labels"]) == bool(options["labels_file"]):
      raise InputError(
        "--task=ner needs one of --labels and --labels_file "
        "(run_ner.py writes label_list.txt to its output_dir)"
      )
    labels = options["labels"] or read_labels_file(options["labels_file"])
    labels = [label.strip() for label in labels]
    bad = [
      l
      for l in labels
      if l != "O" and not (l[:2] in ("B-", "I-") and len(l) > 2)
    ]
    if bad or "O" not in labels or len(set(labels)) != len(labels):
      raise InputError(
        "labels %s: need distinct IOB2 tags (O, B-TYPE, "
        "I-TYPE)" % ",".join(labels)
      )
    for name in ("lstm_units", "windows_per_call"):
      if options[name] < 1:
        raise InputError("--%s=%d: must be positive" % (name, options[name]))
    return dict(options, labels=labels)

  def build_model(self, config):
    self._unk_id = vocab_tokens(self.tokenizer.vocab_file).index("[UNK]")
    check_feature_mode(self.options["feature_mode"], config.num_hidden_layers)
    return NerModel(
      config,
      len(self.options["labels"]),
      self.options["feature_mode"],
      self.options["lstm_units"],
    )

  def bfloat16_weights(self):
    # The BiLSTM of the feature modes cannot be built in bfloat16 (its
    # orthogonal initializer has no bfloat16 kernel).
    return self.options["feature_mode"] == "fine_tune"

  def signatures(self):
    return {
      "serving_default": self.signature(),
      "tag_words": self.signature(self.serve_words, {"words": [None, None]}),
    }

  def serve(self, text):
    text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore")
    words = tf_text.regex_split(text, _PY_SPACE, "")
    found = self._tag(words)
    del found["first_word"], found["last_word"]
    return _padded(dict(found, words=words))

  def serve_words(self, words):
    words = tf.strings.unicode_transcode(
      words, "UTF-8", "UTF-8", errors="ignore"
    )
    real = tf.not_equal(words, "")
    column = tf.boolean_mask(
      tf.broadcast_to(tf.range(tf.shape(words)[1]), tf.shape(words)), real
    )
    found = self._tag(tf.ragged.boolean_mask(words, real))
    outputs = {
      "words": words,
      "tags": tf.tensor_scatter_nd_update(
        tf.fill(tf.shape(words), ""),
        tf.where(real),
        found.pop("tags").flat_values,
      ),
    }
    # Word indices -> the columns of `words` they came from.
    outputs["entity_start"] = found.pop("entity_start").with_flat_values(
      tf.gather(column, found.pop("first_word"))
    )
    outputs["entity_end"] = found.pop("entity_end").with_flat_values(
      tf.gather(column, found.pop("last_word")) + 1
    )
    outputs.update(found)
    return _padded(outputs)

  def _tag(self, words):
    """Tags (ragged like `words` [B, None]), entities (ragged [B, None])
    and the flat word indices of each entity's first and last word."""
    capacity = self.max_seq_length - 2
    pieces = self.tokenizer(words.flat_values)[:, :capacity]
    empty = tf.equal(pieces.row_lengths(), 0)[:, None]
    unk = tf.fill(tf.shape(empty), self._unk_id)
    pieces = tf.concat([pieces, tf.ragged.boolean_mask(unk, empty)], axis=1)
    counts = words.with_flat_values(tf.cast(pieces.row_lengths(), tf.int32))
    flat_counts = counts.flat_values

    def windows(first_last):
      first, last = first_last[0], first_last[1]
      if self.options["document_context"]:  # the batch is the document
        return sentence_windows(flat_counts, capacity, first, last)
      starts, ends, owner = sentence_windows(flat_counts[first:last], capacity)
      return starts + first, ends + first, owner

    # Window starts and ends are flat word indices of the whole batch.
    starts, ends, owner = tf.map_fn(
      windows,
      tf.cast(
        tf.stack([counts.row_starts(), counts.row_limits()], 1), tf.int32
      ),
      fn_output_signature=(_WINDOW,) * 3,
    )
    piece_at = tf.concat([[0], tf.cumsum(flat_counts)], 0)
    window_start = tf.gather(piece_at, starts.flat_values)
    window_end = tf.gather(piece_at, ends.flat_values)
    window_ids = tf.gather(
      pieces.flat_values, tf.ragged.range(window_start, window_end)
    )
    features = self.tokenizer.pack([window_ids], self.max_seq_length)
    predictions = self.model_outputs(
      features, {"predictions": (tf.int32, [self.max_seq_length])}
    )
    window = (
      tf.cast(tf.gather(starts.row_starts(), counts.value_rowids()), tf.int32)
      + owner.flat_values
    )
    # [CLS] comes first: a word's first piece is 1 + pieces before it.
    position = 1 + piece_at[:-1] - tf.gather(window_start, window)
    label_ids = tf.gather_nd(
      predictions["predictions"], tf.stack([window, position], axis=1)
    )
    tags = words.with_flat_values(
      tf.gather(tf.constant(self.options["labels"]), label_ids)
    )
    first, end, kind = entities(tags)
    row_start = tf.cast(
      tf.gather(words.row_starts(), kind.value_rowids()), tf.int32
    )
    first_word = first.flat_values + row_start
    last_word = end.flat_values - 1 + row_start
    text = tf.strings.reduce_join(
      tf.gather(words.flat_values, tf.ragged.range(first_word, last_word + 1)),
      axis=1,
      separator=" ",
    )
    return {
      "tags": tags,
      "num_words": tf.cast(words.row_lengths(), tf.int32),
      "entity_type": kind,
      "entity_text": kind.with_flat_values(text),
      "entity_start": first,
      "entity_end": end,
      "num_entities": tf.cast(kind.row_lengths(), tf.int32),
      "first_word": first_word,
      "last_word": last_word,
    }
