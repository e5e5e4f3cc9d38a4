"""python -m bert_tf.plot_attention: a PNG grid of a sentence's attention.

The code lives in `bert_tf.cli.plot_attention`.
"""

from bert_tf.cli.plot_attention import run

if __name__ == "__main__":
  run()
