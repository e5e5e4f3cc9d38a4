"""The original `optimization.py` API (public facade).

`create_optimizer(init_lr, num_train_steps, num_warmup_steps)` as in the
original, plus the optimizer class; the code lives in
`bert_tf.training.optimization`.
"""

# pylint: disable=unused-import
from bert_tf.training.optimization import AdamWeightDecay
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.optimization import WarmupLinearDecay
