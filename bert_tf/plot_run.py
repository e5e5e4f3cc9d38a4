"""python -m bert_tf.plot_run --output_dir=RUN: a PNG of a training run.

The code lives in `bert_tf.cli.plot_run`.
"""

from bert_tf.cli.plot_run import run

if __name__ == "__main__":
  run()
