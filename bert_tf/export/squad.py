"""SQuAD SavedModel: `question`, `context` -> the answer, as run_squad.py.

Everything `run_squad.py --do_predict` does for one question runs inside
the graph: the context is split into words and word pieces, cut into
doc-stride windows (the run's `max_seq_length`, `doc_stride`,
`max_query_length`), the windows go through the model
(`windows_per_call` at a time, so memory stays bounded), and the best
span among each window's `n_best_size` start and end positions (at most
`max_answer_length` tokens, start in its max-context window) is mapped
back to the context text like the original's `get_final_text`
(squad_spans.py, squad_text.py). The answer equals predictions.json's.

Outputs, per question: `answer` (string), `start_char` / `end_char` (its
code-point offsets in the context, end exclusive; -1 without an answer),
`score` (start + end logit of the best span, float64). With
`--version_2_with_negative` also `null_score` (the lowest [CLS] start + end
logit over the windows); `answer` is "" when `null_score - score` exceeds
the exported `--null_score_diff_threshold`. As in the original, a v1 context
without any valid span answers "empty". Bytes that are not UTF-8 are
dropped from the context first (offsets count the rest).

Example:
    python -m bert_tf.export_saved_model --task=squad \
      --checkpoint=/tmp/squad_output --bert_config_file=bert_config.json \
      --vocab_file=vocab.txt --max_seq_length=384 --export_dir=/tmp/squad_sm
"""

import math

import tensorflow as tf

from bert_tf.export import register_exporter
from bert_tf.export import squad_spans
from bert_tf.export import squad_text
from bert_tf.export.base import Exporter
from bert_tf.export.base import Option
from bert_tf.export.base import vocab_tokens
from bert_tf.export.base import WINDOWS_PER_CALL
from bert_tf.io_utils import InputError
from bert_tf.tasks.squad import SquadModel


@register_exporter("squad")
class SquadExporter(Exporter):
  """`run_squad.py`'s model and post-processing over raw text."""

  INPUTS = ("question", "context")
  DEFAULT_MAX_SEQ_LENGTH = 384
  OPTIONS = (
    Option("doc_stride", 128, "squad: stride between context windows."),
    Option("max_query_length", 64, "squad: question tokens kept."),
    Option("max_answer_length", 30, "squad: longest answer, in tokens."),
    Option("n_best_size", 20, "squad: start/end candidates per window."),
    Option(
      "version_2_with_negative",
      False,
      "squad: SQuAD 2.0 model (may answer nothing).",
    ),
    Option(
      "null_score_diff_threshold",
      0.0,
      "squad v2: answer nothing when null score - best score exceeds this.",
    ),
    WINDOWS_PER_CALL,
  )

  def resolve_options(self, options):
    for name in (
      "doc_stride",
      "max_query_length",
      "max_answer_length",
      "n_best_size",
      "windows_per_call",
    ):
      if options[name] < 1:
        raise InputError("--%s=%d: must be positive" % (name, options[name]))
    if options["max_query_length"] + 3 >= self.max_seq_length:
      raise InputError(
        "--max_query_length=%d leaves no room for the context in "
        "--max_seq_length=%d"
        % (options["max_query_length"], self.max_seq_length)
      )
    return options

  def build_model(self, config):
    self._tokens = tf.constant(vocab_tokens(self.tokenizer.vocab_file))
    return SquadModel(config)

  def encode_windows(self, question, context):
    """(context words and pieces, doc-stride windows, [CLS] query [SEP]
    window [SEP] inputs of every window); also the Python API's training
    features."""
    opts = self.options
    question, context = self.check_batch([question, context])
    # Bad bytes go first, so offsets refer to the text that is read.
    context = tf.strings.unicode_transcode(
      context, "UTF-8", "UTF-8", errors="ignore"
    )
    doc = squad_spans.split_context(context, self.tokenizer)
    query = self.tokenizer(question)[:, : opts["max_query_length"]]
    windows = squad_spans.doc_windows(
      query.row_lengths(),
      doc["ids"].row_lengths(),
      self.max_seq_length,
      opts["doc_stride"],
    )
    example, start = windows["example"], windows["start"]
    doc_rows = doc["ids"].row_starts()
    window_ids = tf.gather(
      doc["ids"].flat_values,
      tf.ragged.range(
        tf.gather(doc_rows, example) + start,
        tf.gather(doc_rows, example) + start + windows["length"],
      ),
    )
    window_query = tf.gather(query, example)
    windows["query_length"] = window_query.row_lengths()
    return (
      doc,
      windows,
      self.tokenizer.pack([window_query, window_ids], self.max_seq_length),
    )

  def serve(self, question, context):
    opts = self.options
    doc, windows, features = self.encode_windows(question, context)
    start = windows["start"]
    logits = self.model_outputs(
      features,
      {
        name: (tf.float32, [self.max_seq_length])
        for name in ("start_logits", "end_logits")
      },
    )
    doc_offsets = windows["query_length"] + 2  # after [CLS] q [SEP]
    max_overlap = math.ceil(self.max_seq_length / opts["doc_stride"]) + 1
    is_max, in_doc = squad_spans.max_context(
      windows, doc_offsets, self.max_seq_length, max_overlap
    )
    best = squad_spans.best_spans(
      logits["start_logits"],
      logits["end_logits"],
      is_max,
      in_doc,
      windows["counts"],
      opts["n_best_size"],
      opts["max_answer_length"],
    )

    to_token = lambda position: (
      tf.gather(squad_spans.pad_rows(start), best["window"])
      + position
      - tf.gather(squad_spans.pad_rows(doc_offsets), best["window"])
    )
    answer, start_char, end_char = squad_text.final_text(
      doc,
      to_token(best["start"]),
      to_token(best["end"]),
      self._tokens,
      self.tokenizer.do_lower_case,
    )
    found, score = best["found"], best["score"]
    outputs = {}
    if opts["version_2_with_negative"]:
      null_score = squad_spans.null_scores(
        logits["start_logits"], logits["end_logits"], windows["counts"]
      )
      if opts["n_best_size"] == 1:
        # A one-entry n-best that is the null answer has no non-null entry.
        found &= score >= null_score
      score = tf.where(found, score, 0.0)
      found &= null_score - score <= opts["null_score_diff_threshold"]
      outputs["null_score"] = null_score
      missing = ""
    else:
      missing = "empty"  # the original's answer when no span is valid
    outputs.update(
      {
        "answer": tf.where(found, answer, missing),
        "start_char": tf.where(found, start_char, -1),
        "end_char": tf.where(found, end_char, -1),
        "score": score,
      }
    )
    return outputs
