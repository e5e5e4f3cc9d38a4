"""The encoder/pre-training export inputs the export tests share: the
export arguments for the original tiny checkpoint ckpt_a and sentence pairs
with literal and real [MASK]s."""

from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix

VOCAB = str(FIXTURES / "encoder" / "vocab_small.txt")
ARGS = [
  "--checkpoint=%s" % ckpt_prefix("ckpt_a"),
  "--vocab_file=%s" % VOCAB,
  "--max_seq_length=40",
]
PAIRS = [
  ("Super Bowl 50 was played in Santa Clara.", "Denver won."),
  ("Who won the game?", ""),
  ("The [MASK] was played in [MASK] , California.", "It [MASK] ."),
  ("[MASK][MASK] at the start", "no mask here"),
]
