"""`BertEncoder`: the original `modeling.BertModel` as a Keras 3 model.

Example:
    config = BertConfig.from_json_file("bert_config.json")
    encoder = BertEncoder(config)
    outputs = encoder({"input_ids": ids, "input_mask": mask,
                       "segment_ids": segments}, training=False)
    outputs["sequence_output"]   # [B, S, H], the last layer
    outputs["pooled_output"]     # [B, H], tanh(dense(first token))
    outputs["encoder_outputs"]   # list of the L layer outputs
    outputs["embedding_output"]  # [B, S, H], after LayerNorm (and dropout)
    encoder(inputs, output_attentions=True)["attentions"]  # L x [B, A, S, S]
    encoder(inputs, skip_padding=True)  # predicting: padded positions are 0

`input_mask` defaults to all ones and `segment_ids` to all zeros, as in the
original. Weights exist right after construction; `tf1_variables()` maps the
original `bert/*` names to them. Works under a `keras.mixed_precision`
policy (LayerNorm and softmax run in float32), `jit_compile` and a
`tf.distribute` strategy scope.
"""

import keras
import tensorflow as tf

from bert_tf.modeling import layer_utils
from bert_tf.modeling.bert_embeddings import BertEmbeddings
from bert_tf.modeling.transformer_block import TransformerBlock


class BertEncoder(keras.Model):
  """Embeddings -> L post-LN transformer blocks -> pooler."""

  def __init__(self, config, name="bert", **kwargs):
    super().__init__(name=name, **kwargs)
    self.config = config
    policy = self.dtype_policy
    self.embeddings = BertEmbeddings(config, name="embeddings", dtype=policy)
    self.blocks = []
    for i in range(config.num_hidden_layers):
      block = TransformerBlock(config, name="layer_%d" % i, dtype=policy)
      # One attribute per block: tf.train.Checkpoint does not see into the
      # list Keras wraps, so the blocks would be missing from checkpoints.
      setattr(self, "layer_%d" % i, block)
      self.blocks.append(block)
    self.pooler = layer_utils.dense(
      config, config.hidden_size, "pooler", policy, activation="tanh"
    )
    self.pooler.build((None, config.hidden_size))
    self.built = True

  @property
  def embedding_table(self):
    """The word-embedding variable [V, H], tied to the MLM output layer."""
    return self.embeddings.word_embeddings

  def call(
    self, inputs, training=False, output_attentions=False, skip_padding=False
  ):
    """`skip_padding` (predicting): the blocks' dense layers and LayerNorms
    run on the real tokens only, the attention scatters them back to [B, S]
    (padded keys get exactly 0 attention either way, so real tokens come
    out as without it, up to float rounding); padded positions of the
    outputs are 0. Batches of uneven rows skip the padding's share of the
    work (MRPC pairs at batch 32: 31%, benchmarks/README.md round 11)."""
    if skip_padding and (training or output_attentions):
      raise ValueError("skip_padding is for predicting without attentions")
    input_ids = inputs["input_ids"]
    input_mask = inputs.get("input_mask")
    if input_mask is None:
      input_mask = keras.ops.ones_like(input_ids)
    segment_ids = inputs.get("segment_ids")
    if segment_ids is None:
      segment_ids = keras.ops.zeros_like(input_ids)
    embedding_output = self.embeddings(
      input_ids, segment_ids, training=training
    )
    adder = layer_utils.additive_attention_mask(input_mask, "float32")
    x, rows = embedding_output, None
    if skip_padding:
      shape = keras.ops.shape(x)
      rows = tf.where(keras.ops.reshape(input_mask, (-1,)) > 0)
      x = tf.gather_nd(keras.ops.reshape(x, (-1, shape[-1])), rows)
    encoder_outputs, attentions = [], []
    for block in self.blocks:
      if output_attentions:
        x, probs = block(x, adder, training=training, return_attention=True)
        attentions.append(probs)
      else:
        x = block(x, adder, training=training, rows=rows)
      encoder_outputs.append(x)
    if skip_padding:  # unused ones are pruned from the graph
      encoder_outputs = [
        keras.ops.reshape(
          tf.scatter_nd(rows, y, (shape[0] * shape[1], shape[2])), shape
        )
        for y in encoder_outputs
      ]
      x = encoder_outputs[-1]
    outputs = {
      "sequence_output": x,
      "pooled_output": self.pooler(x[:, 0, :]),
      "encoder_outputs": encoder_outputs,
      "embedding_output": embedding_output,
    }
    if output_attentions:  # softmax probabilities, float32, before dropout
      outputs["attentions"] = attentions
    return outputs

  def freeze_lowest_layers(self, num_layers):
    """Embeddings + the lowest `num_layers` blocks get no gradient
    (`trainable=False`; dropout still applies in training), the blocks
    above do (again, for gradual unfreezing); 0 freezes nothing. An encoder
    frozen as a whole (feature-based NER) stays frozen."""
    if not 0 <= num_layers <= len(self.blocks):
      raise ValueError(
        "must be between 0 and the model's %d layers" % len(self.blocks)
      )
    for i, layer in enumerate([self.embeddings] + self.blocks):
      layer.trainable = self.trainable and (not num_layers or i > num_layers)

  def tf1_variables(self, prefix="bert"):
    """Original TF1 variable name -> variable, for every encoder weight."""
    names = self.embeddings.tf1_variables(prefix + "/embeddings")
    for i, block in enumerate(self.blocks):
      names.update(block.tf1_variables("%s/encoder/layer_%d" % (prefix, i)))
    names.update(
      layer_utils.dense_variables(prefix + "/pooler/dense", self.pooler)
    )
    return names
