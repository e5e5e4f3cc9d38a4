r"""Raw text -> pre-training TFRecords: the original script's name and flags.

    python create_pretraining_data.py --input_file=./sample_text.txt \
      --output_file=/tmp/tf_examples.tfrecord \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --do_lower_case=True \
      --max_seq_length=128 --max_predictions_per_seq=20 \
      --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5

The job lives in data_prep/pretraining/create_pretraining_data.py (also
`python -m data_prep.create_pretraining_data` and the
`bert-create-pretraining-data` command).
"""

from data_prep.pretraining.create_pretraining_data import run

if __name__ == "__main__":
  run()
