"""Gradual unfreezing (`--unfreeze_schedule`): fewer frozen layers over time.

`"0:12,200:8,400:4,600:0"` keeps the embeddings and the lowest 12 layers
frozen from step 0, the lowest 8 from step 200, 4 from 400 and none from
600 (K frozen layers as `--num_frozen_layers=K`: the embeddings and blocks
0..K-1; K=0 trains everything). The phase is a function of the global
step, so a run resumed after a crash (kill -9) continues in the phase of
its checkpoint's step.

The optimizer is built over every variable (all trainable when the model is
built), so its checkpoint has the same slots in every phase. Frozen
variables get no update; when a phase starts, the slots of the variables it
unfreezes are zeroed, so their moments start fresh rather than carrying
what an earlier phase left (a layer frozen again and unfrozen later, or a
run resumed exactly at a phase boundary, where the switch happens again
from the saved state). Each phase logs its trainable variables and
parameters.

Example:
    schedule = UnfreezeSchedule.parse("0:12,200:8,400:0")
    schedule.check_layers(config.num_hidden_layers)
    trainer = Trainer(task, ..., unfreeze_schedule=schedule)
"""

import re

from absl import logging
import keras
import numpy as np

from bert_tf.io_utils import InputError

_PHASE = re.compile(r"\s*(\d+)\s*:\s*(\d+)\s*")


class UnfreezeSchedule:
  """Phases `(start step, frozen layers)`, in step order from step 0."""

  def __init__(self, phases, flag="--unfreeze_schedule"):
    self.phases = list(phases)
    self.flag = flag
    self._current = None  # frozen layers of the phase entered last
    steps = [s for s, _ in self.phases]
    if not steps or steps[0] != 0:
      raise InputError(
        "%s: the first phase must start at step 0, e.g. 0:12,200:8,400:0" % flag
      )
    if any(b <= a for a, b in zip(steps, steps[1:])):
      raise InputError("%s: phase steps must increase" % flag)

  @classmethod
  def parse(cls, text, flag="--unfreeze_schedule"):
    """`"STEP:LAYERS,..."` -> schedule; InputError naming the bad item."""
    phases = []
    for item in text.split(","):
      match = _PHASE.fullmatch(item)
      if not match:
        raise InputError(
          "%s=%s: %r is not STEP:FROZEN_LAYERS" % (flag, text, item)
        )
      phases.append((int(match.group(1)), int(match.group(2))))
    return cls(phases, "%s=%s" % (flag, text))

  def check_layers(self, num_layers):
    """InputError if a phase freezes more layers than the model has."""
    for step, frozen in self.phases:
      if frozen > num_layers:
        raise InputError(
          "%s: %d frozen layers from step %d, but the model "
          "has %d" % (self.flag, frozen, step, num_layers)
        )

  def frozen_at(self, step):
    """Layers kept frozen during the update after `step` updates."""
    return [k for s, k in self.phases if s <= step][-1]

  def next_boundary(self, step):
    """The first phase start after `step`, or None."""
    later = [s for s, _ in self.phases if s > step]
    return later[0] if later else None

  def enter(self, model, optimizer, step):
    """Sets `model.encoder`'s trainable layers for the update after `step`
    (zeroing the optimizer slots of variables a phase starting at `step`
    unfreezes); True when the trainable variables changed."""
    frozen = self.frozen_at(step)
    if frozen == self._current:
      return False
    fresh = []
    if step in [s for s, _ in self.phases[1:]]:
      model.encoder.freeze_lowest_layers(self.frozen_at(step - 1))
      before = {id(v) for v in model.trainable_variables}
      model.encoder.freeze_lowest_layers(frozen)
      fresh = [v for v in model.trainable_variables if id(v) not in before]
      reset_slots(optimizer, fresh)
    model.encoder.freeze_lowest_layers(frozen)
    self._current = frozen
    trainable = model.trainable_variables
    logging.info(
      "unfreeze phase from step %d: lowest %d layers frozen, %d trainable "
      "variables (%d parameters), %d of them newly unfrozen with fresh "
      "optimizer slots",
      step,
      frozen,
      len(trainable),
      sum(int(np.prod(v.shape)) for v in trainable),
      len(fresh),
    )
    return True


def reset_slots(optimizer, variables):
  """Zeroes the optimizer's slot variables (Adam's m and v, ...) of
  `variables`.

  Keras 3 keeps each kind of slot as a list parallel to the optimizer's
  variables (`_m`, `_v` here, `_momentums` in Keras' Adam) and has no
  public way to name them; slot names do not help either (they come from
  the variable's short path, shared by every layer's `query/kernel`).
  """
  # pylint: disable=protected-access
  owned = optimizer._trainable_variables
  slot_lists = [
    value
    for value in vars(optimizer).values()
    if isinstance(value, (list, tuple))
    and value is not owned
    and len(value) == len(owned)
    and all(
      isinstance(s, keras.Variable) and s.shape == v.shape
      for s, v in zip(value, owned)
    )
  ]
  for variable in variables:
    index = optimizer._get_variable_index(variable)
    for slots in slot_lists:
      slots[index].assign(np.zeros(slots[index].shape, slots[index].dtype))
