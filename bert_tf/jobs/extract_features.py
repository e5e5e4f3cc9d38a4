"""The Job behind extract_features.py: text lines -> the encoder's chosen layers
per token as JSON lines (and attention maps with --output_attentions)."""

import contextlib

from absl import logging
import tqdm

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.extract_features.examples import convert_examples_to_features
from data_prep.extract_features.examples import read_examples

# Loaded when the command runs: --help answers before TensorFlow loads.
distribution = app.lazy_import("bert_tf.training.distribution")

feature_extraction = app.lazy_import("bert_tf.tasks.feature_extraction")

pretrained = app.lazy_import("bert_tf.modeling.pretrained")


def _parse_layers(text):
  try:
    return [int(x) for x in text.split(",")]
  except ValueError as e:
    raise InputError(
      "--layers=%s: expected comma-separated integers" % text
    ) from e


class FeatureExtractionJob:
  """extract_features.py's Job: its flags (the FlagValues given) -> the run."""

  def __init__(self, flag_values):
    self.flags = flag_values

  def run(self):
    for flag in ("input_file", "vocab_file", "bert_config_file"):
      require_file(getattr(self.flags, flag), flag)
    if not self.flags.output_file:
      raise InputError("--output_file is required")
    if not self.flags.init_checkpoint:
      raise InputError("--init_checkpoint is required")
    # TPU flags are accepted for compatibility; the default device is used and
    # embedding lookups are gathers either way (same numbers).
    layer_indexes = _parse_layers(self.flags.layers)
    config = BertConfig.from_json_file(self.flags.bert_config_file)
    config.check_max_seq_length(self.flags.max_seq_length)
    try:
      tokenization.validate_case_matches_checkpoint(
        self.flags.do_lower_case, self.flags.init_checkpoint
      )
    except ValueError as e:
      raise InputError(str(e)) from e
    tokenizer = load_tokenizer(self.flags.vocab_file, self.flags.do_lower_case)
    config.check_vocab(tokenizer.vocab, self.flags.vocab_file)
    examples = read_examples(self.flags.input_file)
    if not examples:
      raise InputError("--input_file=%s: no lines" % self.flags.input_file)
    config.check_segments(
      any(e.text_b for e in examples), "--input_file=%s" % self.flags.input_file
    )
    features = convert_examples_to_features(
      examples, self.flags.max_seq_length, tokenizer
    )
    distribution.configure_runtime(dtype=self.flags.dtype)
    encoder, _, _ = pretrained.load_tf1_model(
      config, self.flags.init_checkpoint
    )
    extractor = feature_extraction.FeatureExtractor(
      encoder,
      layer_indexes,
      self.flags.batch_size,
      output_attentions=self.flags.output_attentions,
    )
    with contextlib.ExitStack() as stack:
      writer = stack.enter_context(atomic_output(self.flags.output_file))
      attentions = (
        stack.enter_context(
          atomic_output(self.flags.output_file + ".attentions.npz", "wb")
        )
        if (self.flags.output_attentions)
        else None
      )
      for line in tqdm.tqdm(
        extractor.json_lines(features, attentions),
        total=len(features),
        unit="line",
        disable=None,
      ):
        writer.write(line)
    logging.info("wrote %d lines to %s", len(features), self.flags.output_file)
