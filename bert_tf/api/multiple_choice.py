"""`MultipleChoice`: run_multiple_choice.py's model (SWAG) over raw text.

Example:
    import bert_tf
    mc = bert_tf.MultipleChoice.from_pretrained("bert-tiny", num_choices=4)
    x = [("She opened the door.", "She", ["walked in.", "ate the door.",
                                          "flew.", "sang a door."])]
    mc.fit(x, [0], epochs=3, batch_size=1)
    mc.predict(x)  # [{"choice": 0, "score": 0.7, "probabilities": [...]}]
    mc.predict(x, raw=True)  # [[p0, p1, p2, p3]]
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
from bert_tf.api.base import TaskApi
from bert_tf.api.inputs import examples
from bert_tf.api.inputs import shown
from bert_tf.api.inputs import strings
from bert_tf.api.inputs import text
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
    rows = []
    for i, example in enumerate(
      examples(x, "(context, endings) or (context, prefix, endings) tuples")
    ):
      if not isinstance(example, (tuple, list)) or len(example) not in (2, 3):
        raise InputError(
          "input %d: %s is not (context, endings) or (context, prefix, "
          "endings)" % (i, shown(example))
        )
      context, prefix, endings = (
        (example[0], "", example[1]) if len(example) == 2 else example
      )
      if isinstance(endings, (str, bytes)) or not isinstance(
        endings, (tuple, list, np.ndarray)
      ):
        raise InputError(
          "input %d's endings: %s is not a list of texts" % (i, shown(endings))
        )
      if len(endings) != self.num_choices:
        raise InputError(
          "input %d: %d endings; the model has num_choices=%d"
          % (i, len(endings), self.num_choices)
        )
      rows.append(
        (
          text(context, "input %d's context" % i),
          text(prefix, "input %d's prefix" % i),
          strings(endings, "input %d's ending %%d" % i),
        )
      )
    self.config.check_segments(True, "inputs")
    return {
      "context": np.array([r[0] for r in rows], dtype=object),
      "prefix": np.array([r[1] for r in rows], dtype=object),
      "endings": np.stack([r[2] for r in rows]),
    }

  def _split_data(self, x, y):
    """run_multiple_choice.py's examples of the inputs."""
    inputs = self._inputs(x)
    y = list(y)
    count = len(inputs["context"])
    if len(y) != count:
      raise InputError("%d inputs but %d labels" % (count, len(y)))
    for i, label in enumerate(y):
      if (
        isinstance(label, bool)
        or not isinstance(label, (int, np.integer))
        or not 0 <= label < self.num_choices
      ):
        raise InputError(
          "label %d: %s is not an ending index in [0, %d)"
          % (i, shown(label), self.num_choices)
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

  def _result(self, row):
    choice = int(row["label"])  # the arg-max, as the SavedModel's
    probabilities = row["probabilities"].tolist()
    return {
      "choice": choice,
      "score": probabilities[choice],
      "probabilities": probabilities,
    }

  def _raw(self, rows):
    return np.stack([row["probabilities"] for row in rows])

  def _metrics(self, rows, batch_size):
    return classifier_results.eval_results(
      self.task.name, rows, batch_size, False, self.global_step
    )
