"""python -m bert_tf.convert_checkpoint: TF1 or HF BERT -> original checkpoint.

The original-named entry point; the code lives in
`bert_tf.cli.convert_checkpoint`.
"""

from bert_tf.cli.convert_checkpoint import run

if __name__ == "__main__":
  run()
