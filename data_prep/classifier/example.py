"""One classifier example, as the original `run_classifier.InputExample`.

Example:
    example = InputExample(guid="train-1", text_a="It rains.",
                           text_b="It is wet.", label="1")

`PaddingInputExample` is the original's marker for the rows appended to the
eval/predict sets so their size is a multiple of the batch size (TPU style);
it featurizes to all zeros with `is_real_example=0`.
"""


class InputExample:
  """A single train/dev/test example for sequence(-pair) classification.

  Attributes:
    guid: unique id, e.g. "train-12" (the original's format).
    text_a: first sequence (str).
    text_b: optional second sequence (str or None; "" counts as absent).
    label: class label string, a float for regression, or the dummy label
      for test sets.
  """

  __slots__ = ("guid", "text_a", "text_b", "label")

  def __init__(self, guid, text_a, text_b=None, label=None):
    self.guid = guid
    self.text_a = text_a
    self.text_b = text_b
    self.label = label

  def __repr__(self):
    return "InputExample(guid=%r, text_a=%r, text_b=%r, label=%r)" % (
      self.guid,
      self.text_a,
      self.text_b,
      self.label,
    )


class PaddingInputExample:
  """A fake example that pads a set to a multiple of the batch size."""

  guid = "padding"
