"""Task heads. Each declares the TF1 variables it owns, so a checkpoint
tells which heads it holds and checkpoint I/O stays a name table.

A head class registers itself with `@register_head(key)` and provides
* `TF1_MARKER`: a variable name only this head has (e.g.
  `cls/squad/output_weights`);
* `from_variables(config, shapes, encoder)`: the head sized for a checkpoint
  (`shapes`: name -> shape);
* `tf1_variables()`: {original TF1 name: variable}.

Example:
    heads = heads_for_variables(config, checkpoint_shapes(prefix), encoder)
    # {"squad": SquadHead, ...} for the heads the checkpoint holds
"""

_REGISTRY = {}


def register_head(key):
  """Class decorator: the head is found under `key` in checkpoints."""

  def decorate(cls):
    _REGISTRY[key] = cls
    return cls

  return decorate


def registered_heads():
  """{key: head class}, every head module imported."""
  # pylint: disable=g-import-not-at-top,unused-import
  from bert_tf.modeling.heads import classifier_head
  from bert_tf.modeling.heads import masked_lm_head
  from bert_tf.modeling.heads import multiple_choice_head
  from bert_tf.modeling.heads import ner_head
  from bert_tf.modeling.heads import next_sentence_head
  from bert_tf.modeling.heads import squad_head

  return dict(_REGISTRY)


def heads_for_variables(config, shapes, encoder):
  """{key: head} for every registered head whose marker is in `shapes`."""
  return {
    key: cls.from_variables(config, shapes, encoder)
    for key, cls in registered_heads().items()
    if cls.TF1_MARKER in shapes
  }
