"""python -m bert_tf.export_checkpoint: run_pretraining.py run -> original ckpt.

The original-named entry point; the code lives in
`bert_tf.cli.export_checkpoint`.
"""

from bert_tf.cli.export_checkpoint import run

if __name__ == "__main__":
  run()
