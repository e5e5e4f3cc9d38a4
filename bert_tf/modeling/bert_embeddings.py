"""`BertEmbeddings`: word + token-type + position embeddings, LayerNorm and
dropout.

Example:
    embeddings = BertEmbeddings(config)
    x = embeddings(input_ids, segment_ids, training=False)  # [B, S, H]

Variables map 1:1 to the original `bert/embeddings/*` (see `tf1_variables`).
There is no position-id input: rows 0..S-1 of the position table are used.
"""

import keras

from bert_tf.modeling import layer_utils


class BertEmbeddings(keras.layers.Layer):
  """The original `embedding_lookup` + `embedding_postprocessor`."""

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    self.config = config
    self.layer_norm = layer_utils.layer_norm("LayerNorm", self.dtype_policy)
    self.dropout = layer_utils.dropout(
      config.hidden_dropout_prob, self.dtype_policy
    )
    self.build(None)

  def build(self, input_shape):
    del input_shape  # All shapes come from the config.
    c = self.config
    init = layer_utils.create_initializer(c.initializer_range)

    # float32 and autocast=False under any policy: only the gathered rows
    # are cast, not the whole [V, H] table each step, and the three are
    # summed in float32 (also in a bfloat16 SavedModel, whose other weights
    # are bfloat16).
    def table(rows, name):
      return self.add_weight(
        shape=(rows, c.hidden_size),
        initializer=init,
        name=name,
        dtype="float32",
        autocast=False,
      )

    self.word_embeddings = table(c.vocab_size, "word_embeddings")
    self.token_type_embeddings = table(
      c.type_vocab_size, "token_type_embeddings"
    )
    self.position_embeddings = table(
      c.max_position_embeddings, "position_embeddings"
    )
    self.layer_norm.build((None, None, c.hidden_size))

  def call(self, input_ids, segment_ids, training=False):
    seq_length = input_ids.shape[1]
    if seq_length is not None:
      self.config.check_max_seq_length(seq_length)
    else:
      seq_length = keras.ops.shape(input_ids)[1]
    x = keras.ops.take(self.word_embeddings, input_ids, axis=0)
    x = x + keras.ops.take(self.token_type_embeddings, segment_ids, axis=0)
    positions = keras.ops.slice(
      self.position_embeddings, (0, 0), (seq_length, self.config.hidden_size)
    )
    x = keras.ops.cast(x + positions[None], self.compute_dtype)
    return self.dropout(self.layer_norm(x), training=training)

  def tf1_variables(self, prefix="bert/embeddings"):
    names = {
      prefix + "/word_embeddings": self.word_embeddings,
      prefix + "/token_type_embeddings": self.token_type_embeddings,
      prefix + "/position_embeddings": self.position_embeddings,
    }
    names.update(
      layer_utils.layer_norm_variables(prefix + "/LayerNorm", self.layer_norm)
    )
    return names
