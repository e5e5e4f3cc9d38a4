"""`FeatureExtractor`: runs the encoder and formats the original JSON lines.

Example:
    extractor = FeatureExtractor(encoder, layer_indexes=[-1, -2], batch_size=32)
    for line in extractor.json_lines(features):
      out.write(line)

Features are what the original's `InputFeatures` hold: `FEATURE_FIELDS`
(data_prep.extract_features makes them without TensorFlow;
tests/test_layering.py checks that it makes exactly these).

Each line is the original `extract_features.py` record:
`{"linex_index": id, "features": [{"token": t, "layers": [{"index": i,
"values": [...]}]}]}`, values rounded to 6 decimals with Python's `round`,
only real tokens. Layer indexes count over the L transformer-layer outputs
(-1 = last); the embedding output is not one of them.

With `output_attentions=True`, `write_attentions` also streams each line's
attention probabilities of the same layers to an `.npz`: `layers` (the
indexes), and per line `line_<id>_tokens` [T] and `line_<id>_attentions`
float32 [layers, heads, T, T] (softmax over keys, real tokens only; row =
query token, column = key token).
"""

import json
import zipfile

import numpy as np
import tensorflow as tf

from bert_tf.io_utils import InputError

# What FeatureExtractor reads from each feature: its line's id, its
# unpadded word pieces, and the model inputs (padded to the sequence length).
FEATURE_FIELDS = (
  "unique_id",
  "tokens",
  "input_ids",
  "input_mask",
  "input_type_ids",
)


class FeatureExtractor:
  """Batches features through a `BertEncoder` (inference, no dropout)."""

  def __init__(
    self, encoder, layer_indexes, batch_size=32, output_attentions=False
  ):
    num_layers = encoder.config.num_hidden_layers
    for index in layer_indexes:
      if not -num_layers <= index < num_layers:
        raise InputError(
          "--layers: index %d is out of range for a model "
          "with %d layers" % (index, num_layers)
        )
    self.layer_indexes = list(layer_indexes)
    self.batch_size = batch_size
    self.output_attentions = output_attentions
    self._encoder = encoder
    self._predict = tf.function(self._layers, reduce_retracing=True)

  def _layers(self, input_ids, input_mask, segment_ids):
    outputs = self._encoder(
      {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": segment_ids,
      },
      training=False,
      output_attentions=self.output_attentions,
    )
    all_layers = outputs["encoder_outputs"]
    layers = tf.stack(
      [tf.cast(all_layers[i], tf.float32) for i in self.layer_indexes], axis=1
    )
    if not self.output_attentions:
      return layers, tf.zeros([tf.shape(layers)[0], 0])
    return layers, tf.stack(
      [outputs["attentions"][i] for i in self.layer_indexes], axis=1
    )

  def predict(self, features):
    """Yields (feature, array [num_layers_requested, S, H], attentions
    [num_layers_requested, A, S, S] or an empty array) in input order."""
    for start in range(0, len(features), self.batch_size):
      batch = features[start : start + self.batch_size]
      layers, attentions = self._predict(
        tf.constant([f.input_ids for f in batch], tf.int32),
        tf.constant([f.input_mask for f in batch], tf.int32),
        tf.constant([f.input_type_ids for f in batch], tf.int32),
      )
      yield from zip(batch, layers.numpy(), attentions.numpy())

  def to_json_line(self, feature, layers):
    """The original output record for one feature, with a newline."""
    tokens = []
    for position, token in enumerate(feature.tokens):
      tokens.append(
        {
          "token": token,
          "layers": [
            {
              "index": index,
              "values": [
                round(x, 6)
                for x in layers[j, position].astype(np.float64).tolist()
              ],
            }
            for j, index in enumerate(self.layer_indexes)
          ],
        }
      )
    return (
      json.dumps({"linex_index": feature.unique_id, "features": tokens}) + "\n"
    )

  def json_lines(self, features, attentions_file=None):
    """The JSON lines; with `attentions_file` (a writable binary file,
    needs `output_attentions`) also the attentions `.npz` into it."""
    archive = (
      zipfile.ZipFile(attentions_file, "w") if attentions_file else (None)
    )
    if archive:
      _write_array(archive, "layers", np.array(self.layer_indexes))
    for feature, layers, attentions in self.predict(features):
      if archive:
        size = len(feature.tokens)
        name = "line_%d_" % feature.unique_id
        _write_array(archive, name + "tokens", np.array(feature.tokens))
        _write_array(
          archive, name + "attentions", attentions[:, :, :size, :size]
        )
      yield self.to_json_line(feature, layers)
    if archive:
      archive.close()


def _write_array(archive, name, array):
  """One array of an `.npz` (np.load reads it), written as it comes."""
  with archive.open(name + ".npy", "w", force_zip64=True) as f:
    np.lib.format.write_array(f, np.asarray(array), allow_pickle=False)
