"""The Job behind extract_features.py: text lines -> the encoder's chosen layers
per token as JSON lines (and attention maps with --output_attentions)."""

import contextlib
import dataclasses
import os

from absl import logging
import tqdm

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import config as job_config
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

# --output_attentions' file: beside --output_file, under its name.
_ATTENTIONS = ".attentions.npz"


def _parse_layers(text):
  try:
    return [int(x) for x in text.split(",")]
  except ValueError as e:
    raise InputError(
      "--layers=%s: expected comma-separated integers" % text
    ) from e


@dataclasses.dataclass
class FeatureExtractionConfig(job_config.Config):
  """extract_features.py's flags."""

  input_file: str | None = None
  output_file: str | None = None
  layers: str = "-1,-2,-3,-4"
  bert_config_file: str | None = None
  vocab_file: str | None = None
  do_lower_case: bool = True
  init_checkpoint: str | None = None
  max_seq_length: int = 128
  batch_size: int = 32
  output_attentions: bool = False
  dtype: str = "float32"
  use_tpu: bool = False
  master: str | None = None
  num_tpu_cores: int = 8
  use_one_hot_embeddings: bool = False


class FeatureExtractionJob:
  """extract_features.py's Job: its flags (the FlagValues given) -> the run."""

  def __init__(self, config):
    self.config = config

  def run(self):
    for flag in ("input_file", "vocab_file", "bert_config_file"):
      require_file(getattr(self.config, flag), flag)
    if not self.config.output_file:
      raise InputError("--output_file is required")
    if not self.config.init_checkpoint:
      raise InputError("--init_checkpoint is required")
    # TPU flags are accepted for compatibility; the default device is used and
    # embedding lookups are gathers either way (same numbers).
    layer_indexes = _parse_layers(self.config.layers)
    config = BertConfig.from_json_file(self.config.bert_config_file)
    config.check_max_seq_length(self.config.max_seq_length)
    try:
      tokenization.validate_case_matches_checkpoint(
        self.config.do_lower_case, self.config.init_checkpoint
      )
    except ValueError as e:
      raise InputError(str(e)) from e
    tokenizer = load_tokenizer(
      self.config.vocab_file, self.config.do_lower_case
    )
    config.check_vocab(tokenizer.vocab, self.config.vocab_file)
    examples = read_examples(self.config.input_file)
    if not examples:
      raise InputError("--input_file=%s: no lines" % self.config.input_file)
    config.check_segments(
      any(e.text_b for e in examples),
      "--input_file=%s" % self.config.input_file,
    )
    features = convert_examples_to_features(
      examples, self.config.max_seq_length, tokenizer
    )
    distribution.configure_runtime(dtype=self.config.dtype)
    encoder, _, _ = pretrained.load_tf1_model(
      config, self.config.init_checkpoint
    )
    extractor = feature_extraction.FeatureExtractor(
      encoder,
      layer_indexes,
      self.config.batch_size,
      output_attentions=self.config.output_attentions,
    )
    output = os.path.abspath(self.config.output_file)
    with contextlib.ExitStack() as stack:
      # The lines and their attention maps are one set: an earlier run's
      # .attentions.npz never stays beside new lines.
      stack.enter_context(
        output_set(
          os.path.dirname(output),
          [os.path.basename(output), os.path.basename(output) + _ATTENTIONS],
        )
      )
      writer = stack.enter_context(atomic_output(self.config.output_file))
      attentions = (
        stack.enter_context(
          atomic_output(self.config.output_file + _ATTENTIONS, "wb")
        )
        if (self.config.output_attentions)
        else None
      )
      for line in tqdm.tqdm(
        extractor.json_lines(features, attentions),
        total=len(features),
        unit="line",
        disable=None,
      ):
        writer.write(line)
    logging.info("wrote %d lines to %s", len(features), self.config.output_file)
