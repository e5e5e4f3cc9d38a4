"""`MultipleChoice`: run_multiple_choice.py's model (SWAG) over raw text.

Example:
    import bert_tf
    mc = bert_tf.MultipleChoice.from_pretrained("bert-tiny", num_choices=4)
    x = [("She opened the door.", "She", ["walked in.", "ate the door.",
                                          "flew.", "sang a door."])]
    mc.fit(x, [0], epochs=3, batch_size=1)
    mc.predict(x)            # [[p0, p1, p2, p3]]
    mc.evaluate(x, [0])      # eval_accuracy, eval_loss
    mc.save_run("/tmp/swag_run")   # run_multiple_choice.py reads it

An example is (context, endings) or (context, prefix, endings): each
choice is `[CLS] context [SEP] prefix + " " + ending [SEP]`, as the script
packs SWAG's sent1, sent2 and endings (data_prep/multiple_choice's
`convert_example` featurizes fit's and evaluate's examples). Labels are the
right ending's index.
"""

import numpy as np

from bert_tf.api.base import INPUTS
from bert_tf.api.base import stacked
from bert_tf.api.base import strings
from bert_tf.api.base import TaskApi
from bert_tf.io_utils import InputError
from bert_tf.jobs import multiple_choice as multiple_choice_job
from bert_tf.tasks import classifier_results
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from data_prep.multiple_choice.examples import MultipleChoiceExample
from data_prep.multiple_choice.features import convert_example


class MultipleChoice(TaskApi):
  """Pick one of `num_choices` endings of a context."""

  KIND = "multiple_choice"
  JOB = multiple_choice_job.MultipleChoiceJob
  CONFIG = multiple_choice_job.MultipleChoiceConfig

  @classmethod
  def _settings(cls, given, recorded):
    unknown = set(given) - {"num_choices"}
    if unknown:
      raise InputError(
        "MultipleChoice: unknown argument %s" % sorted(unknown)[0]
      )
    count = given.get("num_choices")
    if recorded is not None:
      if count not in (None, recorded.head["num_choices"]):
        raise InputError(
          "num_choices=%d: the run's model has %d"
          % (count, recorded.head["num_choices"])
        )
      return recorded.head, recorded.sequence
    if not count or count < 2:
      raise InputError("MultipleChoice needs num_choices= (2 or more)")
    return {"num_choices": count}, {}

  @property
  def num_choices(self):
    return self.head["num_choices"]

  def _options(self):
    return {"prefix": True}

  def _task(self):
    return MultipleChoiceTask(
      self.config, self.num_choices, self.max_seq_length
    )

  def _inputs(self, x):
    if isinstance(x, (str, bytes)):
      raise InputError(
        "inputs: a list of (context, endings) or (context, "
        "prefix, endings) tuples, not one text"
      )
    rows = []
    for example in x:
      if not isinstance(example, (tuple, list)) or len(example) not in (2, 3):
        raise InputError(
          "inputs: %r is not (context, endings) or (context, "
          "prefix, endings)" % (example,)
        )
      context, prefix, endings = (
        (example[0], "", example[1]) if len(example) == 2 else example
      )
      endings = strings(endings, "endings")
      if len(endings) != self.num_choices:
        raise InputError(
          "inputs: %d endings in %r; the model has "
          "num_choices=%d" % (len(endings), example, self.num_choices)
        )
      rows.append((context, prefix, endings))
    self.config.check_segments(True, "inputs")
    return {
      "context": strings([r[0] for r in rows], "context"),
      "prefix": strings([r[1] for r in rows], "prefix"),
      "endings": np.stack([r[2] for r in rows]),
    }

  def _split_data(self, x, y):
    """run_multiple_choice.py's examples of the inputs."""
    inputs = self._inputs(x)
    y = np.asarray(list(y))
    count = len(inputs["context"])
    if (
      y.shape != (count,)
      or not np.issubdtype(y.dtype, np.integer)
      or (y.min() < 0 or y.max() >= self.num_choices)
    ):
      raise InputError(
        "labels: need %d ending indices in [0, %d), got %r"
        % (count, self.num_choices, y.tolist()[:5])
      )
    return [
      MultipleChoiceExample(
        "api-%d" % i, context, prefix, list(endings), int(label)
      )
      for i, (context, prefix, endings, label) in enumerate(
        zip(inputs["context"], inputs["prefix"], inputs["endings"], y)
      )
    ]

  def _features(self, x, y):
    rows = [
      convert_example(example, self.max_seq_length, self.tokenizer)
      for example in self._split_data(x, y)
    ]
    return stacked(rows, INPUTS + ("is_real_example",), label_ids="label_id")

  def _results(self, outputs):
    return np.concatenate([part["probabilities"] for part in outputs])

  def _metrics(self, rows, batch_size):
    return classifier_results.eval_results(
      self.task.name, rows, batch_size, False, self.global_step
    )
