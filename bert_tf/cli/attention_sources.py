"""Where `bert_tf.plot_attention` gets its maps: checkpoints run on text, or
the layers of a stored `.npz` (read by `bert_tf.attention.maps`).

Example:
    before, after = from_checkpoints(FLAGS, [pretrained, run_dir], None)
"""

import glob
import os

from bert_tf.attention import maps as maps_lib
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.extract_features.examples import convert_examples_to_features
from data_prep.extract_features.examples import InputExample
from data_prep.extract_features.examples import read_examples

# Loaded when the command runs: --help answers before TensorFlow loads.
bert_config = app.lazy_import("bert_tf.modeling.bert_config")
bert_encoder = app.lazy_import("bert_tf.modeling.bert_encoder")
checkpoint_io = app.lazy_import("bert_tf.checkpoints.checkpoint_io")
engine_checkpoint = app.lazy_import("bert_tf.checkpoints.engine_checkpoint")
feature_extraction = app.lazy_import("bert_tf.tasks.feature_extraction")
pretrained = app.lazy_import("bert_tf.modeling.pretrained")
tf = app.lazy_import("tensorflow")

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"  # engine checkpoints


def is_part_of(path, checkpoint):
  """Whether `path` is inside the folder `checkpoint`, or one of the files
  of the checkpoint prefix `checkpoint`."""
  real = os.path.realpath(path)
  if os.path.isdir(checkpoint):
    folder = os.path.realpath(checkpoint)
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)
  files = glob.glob(glob.escape(checkpoint) + ".*")
  return real in {os.path.realpath(f) for f in files}


def select_layers(maps, layers):
  """`maps` restricted to `layers` (as the .npz numbers them), in order."""
  if layers is None:
    return maps
  missing = [i for i in layers if i not in maps.layers]
  if missing:
    raise InputError(
      "--layers: %d is not in %s (it has layers %s)"
      % (missing[0], maps.source, maps.layers)
    )
  picked = [maps.layers.index(i) for i in layers]
  for example in maps.examples:
    example.attentions = example.attentions[picked]
  maps.layers = list(layers)
  return maps


def load_encoder(config, checkpoint):
  """The encoder of an original checkpoint or of a Trainer checkpoint."""
  prefix = checkpoint_io.resolve_checkpoint(checkpoint)
  if not tf.train.load_checkpoint(prefix).has_tensor(_OBJECT_GRAPH_KEY):
    return pretrained.load_tf1_model(config, prefix)[0]
  encoder = bert_encoder.BertEncoder(config)
  # Every task model of the engine keeps its encoder as `encoder`.
  engine_checkpoint.restore_engine_checkpoint(
    tf.train.Checkpoint(encoder=encoder), prefix
  )
  return encoder


def _examples(flag_values):
  if flag_values.input_file:
    require_file(flag_values.input_file, "input_file")
    examples = read_examples(flag_values.input_file)
    if not examples:
      raise InputError("--input_file=%s: no lines" % flag_values.input_file)
    return examples
  return [InputExample(0, flag_values.text, flag_values.text_b)]


def _layer_numbers(layers, num_layers):
  """`layers` (default: all) as 0-based layer numbers."""
  if layers is None:
    return list(range(num_layers))
  for index in layers:
    if not -num_layers <= index < num_layers:
      raise InputError(
        "--layers: %d is out of range for a model with %d layers"
        % (index, num_layers)
      )
  return [i % num_layers for i in layers]


def from_checkpoints(flag_values, checkpoints, layers):
  """An AttentionMaps per checkpoint (same config and inputs): the
  attentions of `layers` (default all) for each input, over its real
  word pieces."""
  require_file(flag_values.bert_config_file, "bert_config_file")
  config = bert_config.BertConfig.from_json_file(flag_values.bert_config_file)
  config.check_max_seq_length(flag_values.max_seq_length)
  tokenizer = load_tokenizer(flag_values.vocab_file, flag_values.do_lower_case)
  config.check_vocab(tokenizer.vocab, flag_values.vocab_file)
  examples = _examples(flag_values)
  config.check_segments(any(e.text_b for e in examples), "the input")
  features = convert_examples_to_features(
    examples, flag_values.max_seq_length, tokenizer
  )
  layers = _layer_numbers(layers, config.num_hidden_layers)
  found = []
  for checkpoint in checkpoints:
    extractor = feature_extraction.FeatureExtractor(
      load_encoder(config, checkpoint), layers, output_attentions=True
    )
    found.append(
      maps_lib.AttentionMaps(
        layers,
        [
          maps_lib.Example(
            "line %d" % feature.unique_id,
            list(feature.tokens),
            [int(s) for s in feature.input_type_ids[: len(feature.tokens)]],
            attentions[:, :, : len(feature.tokens), : len(feature.tokens)],
          )
          for feature, _, attentions in extractor.predict(features)
        ],
        checkpoint,
      )
    )
  return found
