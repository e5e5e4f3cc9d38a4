#!/usr/bin/env bash
# SQuAD v1.1 with a real pretrained encoder (not CI; hours on 2 CPU cores).
#
# Converts the HuggingFace all-MiniLM-L6-v2 folder to an original-format
# checkpoint, fine-tunes it with run_squad.py on the first 24 articles of the
# official dev-v1.1.json (first answers, 5,696 questions; max_seq_length 256,
# doc_stride 128, 2 epochs, batch 32, lr 5e-5), predicts the other 24
# articles (4,874 questions, unseen) and prints the official EM / F1 from
# the in-process evaluation (also in $WORK/squad/eval_results.json).
#
#   bash examples/squad_minilm.sh                  # defaults below
#   WORK=/tmp/minilm bash examples/squad_minilm.sh --use_xla  # extra flags
#   SHARED=/data/shared bash examples/squad_minilm.sh  # or MODEL=, SQUAD=
#   # a short run (the float32 vs bfloat16 check in the README):
#   WORK=/tmp/sq_bf16 PREDICT_ARTICLES=24:36 bash examples/squad_minilm.sh \
#     --num_train_epochs=1 --dtype=mixed_bfloat16
#
# Data and model come from ../shared next to the repository (SHARED), as
# models/all-MiniLM-L6-v2 (MODEL) and data/squad/dev-v1.1.json (SQUAD).
#
# Re-running resumes training from the last checkpoint in $WORK/squad.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
export TF_CPP_MIN_LOG_LEVEL=2
SHARED=${SHARED:-../shared}
MODEL=${MODEL:-$SHARED/models/all-MiniLM-L6-v2}
SQUAD=${SQUAD:-$SHARED/data/squad/dev-v1.1.json}
for path in "$MODEL" "$SQUAD"; do
  if [ ! -e "$path" ]; then
    echo "ERROR: $path not found (set SHARED, MODEL or SQUAD)" >&2
    exit 1
  fi
done
WORK=${WORK:-out/squad_minilm}
CKPT=$WORK/minilm_ckpt
mkdir -p "$WORK"

if [ ! -e "$CKPT/bert_model.ckpt.index" ]; then
  "$PY" -m bert_tf.convert_checkpoint --input="$MODEL" --input_format=hf \
    --output_dir="$CKPT"
fi
"$PY" -m examples.squad_slice --input_file="$SQUAD" --articles="${TRAIN_ARTICLES:-0:24}" \
  --output_file="$WORK/train.json" --first_answer_only
"$PY" -m examples.squad_slice --input_file="$SQUAD" --articles="${PREDICT_ARTICLES:-24:}" \
  --output_file="$WORK/predict.json"

start=$(date +%s)
"$PY" run_squad.py --vocab_file="$CKPT/vocab.txt" \
  --bert_config_file="$CKPT/bert_config.json" \
  --init_checkpoint="$CKPT/bert_model.ckpt" --do_lower_case=True \
  --do_train --train_file="$WORK/train.json" \
  --do_predict --predict_file="$WORK/predict.json" \
  --max_seq_length=256 --doc_stride=128 --max_query_length=64 \
  --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=2 \
  --predict_batch_size=64 --save_checkpoints_steps=20 \
  --iterations_per_loop=5 --seed=12345 --output_dir="$WORK/squad" "$@"
echo "wall time: $(( $(date +%s) - start )) s"
