"""python -m data_prep.squad_predictions: re-score raw_results.jsonl, no model.

The original-named entry point; the code lives in `data_prep.squad.predictions`.
"""

from data_prep.squad.predictions import run

if __name__ == "__main__":
  run()
