"""python -m data_prep.create_pretraining_data: text -> pre-training TFRecords.

The original-named entry point; the code lives in
`data_prep.pretraining.create_pretraining_data`.
"""

from data_prep.pretraining.create_pretraining_data import run

if __name__ == "__main__":
  run()
