#!/usr/bin/env bash
# Your own BERT from raw text, and where its pre-training starts to pay:
#   95% of the corpus's documents -> learned WordPiece vocabulary
#   -> create_pretraining_data -> a small BERT (examples/bert_config_tiny.json:
#   2 layers, H=128) pre-trained with whole-word dynamic masking, a checkpoint
#   kept every 250 steps -> checkpoints fine-tuned on an SST-2 slice, next to
#   the same model fine-tuned from random init (step 0), same recipe.
# The other 5% of the documents are held out for masked-LM / next-sentence
# accuracy (static whole-word masks). examples/from_scratch_report.py prints
# the table and draws OUTPUT_DIR/curve.png (SST-2 dev accuracy and held-out
# accuracy against pre-training steps).
#
#   nice -n 10 bash examples/from_scratch.sh   # ~20 CPU minutes (2 cores)
#
# Environment (defaults in brackets): OUTPUT_DIR [out/from_scratch], SHARED
# [../shared, from the repository root], CORPUS
# [$SHARED/data/corpus/tiny_pretrain_corpus.txt], GLUE_DIR
# [$SHARED/data/glue], VOCAB_SIZE [8000], PRETRAIN_STEPS [2000, batch 32 x
# 128 tokens], WARMUP_STEPS [300], LEARNING_RATE [1e-3], CURVE_STEPS ["250
# 500 1000": checkpoints, multiples of 250, fine-tuned besides 0 and
# PRETRAIN_STEPS], SEEDS ["1
# 2 3": fine-tuning seeds at step 0 and PRETRAIN_STEPS], CURVE_SEEDS ["1 2 3"],
# TRAIN_EXAMPLES [2000 SST-2 training sentences], TASK_TEXT [0; 1: SST-2's
# unlabeled training sentences join the pre-training text], DOC_STRIDE [1;
# k: only every k-th training document is kept], EXTRA_TEXT [none; a file of
# more documents for the pre-training text, e.g. examples/local_text.py's],
# BERT_CONFIG_FILE [examples/bert_config_tiny.json; its vocab_size is
# replaced], PYTHON. The held-out documents are the same whatever the last
# three say.
# Each step's log is in OUTPUT_DIR/logs, its wall and CPU seconds in
# OUTPUT_DIR/times.tsv. Finished steps are skipped when the script runs again
# in the same OUTPUT_DIR (delete it to start over).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
OUT=${OUTPUT_DIR:-out/from_scratch}
SHARED=${SHARED:-../shared}
CORPUS=${CORPUS:-$SHARED/data/corpus/tiny_pretrain_corpus.txt}
GLUE_DIR=${GLUE_DIR:-$SHARED/data/glue}
VOCAB_SIZE=${VOCAB_SIZE:-8000}
PRETRAIN_STEPS=${PRETRAIN_STEPS:-2000}
WARMUP_STEPS=${WARMUP_STEPS:-300}
LEARNING_RATE=${LEARNING_RATE:-1e-3}
CURVE_STEPS=${CURVE_STEPS:-250 500 1000}
SEEDS=${SEEDS:-1 2 3}
CURVE_SEEDS=${CURVE_SEEDS:-1 2 3}
TRAIN_EXAMPLES=${TRAIN_EXAMPLES:-2000}
TASK_TEXT=${TASK_TEXT:-0}
DOC_STRIDE=${DOC_STRIDE:-1}
EXTRA_TEXT=${EXTRA_TEXT:-}
BERT_CONFIG_FILE=${BERT_CONFIG_FILE:-examples/bert_config_tiny.json}
case $DOC_STRIDE in
  '' | *[!0-9]* | 0) echo "ERROR: DOC_STRIDE=$DOC_STRIDE: not a whole number >= 1" >&2; exit 2 ;;
esac
if [ -n "$EXTRA_TEXT" ] && [ ! -r "$EXTRA_TEXT" ]; then
  echo "ERROR: EXTRA_TEXT=$EXTRA_TEXT: no such readable file" >&2; exit 2
fi
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
M="$OUT/model"
mkdir -p "$OUT/data" "$OUT/sst2_data" "$OUT/logs" "$M"

# run LABEL COMMAND...: the command's output to logs/LABEL.log, its wall,
# user and system seconds (children included) to times.tsv.
run() {
  local label=$1 TIMEFORMAT
  shift
  echo "== $(date +%T) $label"
  TIMEFORMAT="$label	%R	%U	%S"
  if ! { time "$@" > "$OUT/logs/$label.log" 2>&1; } 2> "$OUT/logs/$label.time"
  then
    tail -n 3 "$OUT/logs/$label.log" >&2
    echo "ERROR: $label failed (log: $OUT/logs/$label.log)" >&2
    exit 1
  fi
  cat "$OUT/logs/$label.time" >> "$OUT/times.tsv"
}

# Held-out documents: the last 5% of the corpus's (blank-line separated).
if [ ! -s "$OUT/data/heldout.txt" ]; then
  docs=$(grep -c '^$' "$CORPUS" || true)
  awk -v cut=$(( docs * 95 / 100 )) -v train="$OUT/data/corpus.txt" \
      -v heldout="$OUT/data/heldout.txt" \
      '/^$/ { blank++ } { print > (blank < cut ? train : heldout) }' "$CORPUS"
fi
# The pre-training text: the training documents (every DOC_STRIDE-th), then
# EXTRA_TEXT's (docs/pretraining.md, "How much text would"), then with
# TASK_TEXT=1, task-adaptive pre-training: SST-2's training sentences,
# labels dropped, join the pre-training text and the vocabulary's, 20 to a
# document (unrelated phrases: they teach masked LM, not NSP). The dev
# sentences never do. Measured in docs/pretraining.md; off by default.
if [ ! -s "$OUT/data/train.txt" ]; then
  awk -v k="$DOC_STRIDE" 'd % k == 0 { print } /^$/ { d++ }' \
    "$OUT/data/corpus.txt" > "$OUT/data/train.tmp"
  if [ -n "$EXTRA_TEXT" ]; then
    echo >> "$OUT/data/train.tmp"
    cat "$EXTRA_TEXT" >> "$OUT/data/train.tmp"
  fi
  if [ "$TASK_TEXT" = 1 ]; then
    echo >> "$OUT/data/train.tmp"
    awk -F'\t' 'NR > 1 { print $1; if ((NR - 1) % 20 == 0) print "" }' \
      "$GLUE_DIR/SST-2/train.tsv" | sed 's/ *$//' >> "$OUT/data/train.tmp"
  fi
  mv "$OUT/data/train.tmp" "$OUT/data/train.txt"
fi
head -n $(( TRAIN_EXAMPLES + 1 )) "$GLUE_DIR/SST-2/train.tsv" \
  > "$OUT/sst2_data/train.tsv"
cp "$GLUE_DIR/SST-2/dev.tsv" "$OUT/sst2_data/dev.tsv"

[ -s "$M/vocab.txt" ] || run vocab "$PYTHON" -m data_prep.learn_vocab \
  --input_file="$OUT/data/train.txt" --vocab_size="$VOCAB_SIZE" \
  --num_unused_tokens=99 --do_lower_case=True --output_file="$M/vocab.txt"
"$PYTHON" - "$M" "$BERT_CONFIG_FILE" <<'EOF'
import json, sys
config = json.load(open(sys.argv[2]))
config["vocab_size"] = sum(1 for _ in open(sys.argv[1] + "/vocab.txt"))
json.dump(config, open(sys.argv[1] + "/bert_config.json", "w"), indent=2)
EOF

# Training records: 5 duplicates (different next-sentence pairs; the masks
# are redrawn every batch anyway). Held-out: 2, static whole-word masks.
for spec in "train 12345 5" "heldout 54321 2"; do
  read -r split seed dupes <<< "$spec"
  [ -s "$M/$split.tfrecord" ] || run "data:$split" \
    "$PYTHON" -m data_prep.create_pretraining_data \
    --input_file="$OUT/data/$split.txt" --output_file="$M/$split.tfrecord" \
    --vocab_file="$M/vocab.txt" --do_lower_case=True --max_seq_length=128 \
    --max_predictions_per_seq=20 --masked_lm_prob=0.15 --random_seed="$seed" \
    --dupe_factor="$dupes" --do_whole_word_mask=True
done

# The schedule: a warmup of 300 steps to lr 1e-3 lets the model leave the
# unigram plateau (masked-LM accuracy = the commonest piece's frequency) that
# a 60-step warmup left it on; then linear decay to 0.
if [ ! -s "$M/pretrain/eval_results.txt" ]; then
  run pretrain "$PYTHON" run_pretraining.py --input_file="$M/train.tfrecord" \
    --output_dir="$M/pretrain" --do_train=True \
    --bert_config_file="$M/bert_config.json" --vocab_file="$M/vocab.txt" \
    --dynamic_masking=True --do_whole_word_mask=True --train_batch_size=32 \
    --max_seq_length=128 --max_predictions_per_seq=20 \
    --num_train_steps="$PRETRAIN_STEPS" --num_warmup_steps="$WARMUP_STEPS" \
    --learning_rate="$LEARNING_RATE" --save_checkpoints_steps=250 \
    --keep_checkpoint_max=0 --iterations_per_loop=50 --seed=1 --progress=False
  run eval "$PYTHON" run_pretraining.py --input_file="$M/heldout.tfrecord" \
    --output_dir="$M/pretrain" --do_eval=True --vocab_file="$M/vocab.txt" \
    --bert_config_file="$M/bert_config.json" --eval_batch_size=32 \
    --max_seq_length=128 --max_predictions_per_seq=20 --max_eval_steps=100
fi

# Fine-tuning, the same recipe at every step (step 0 = random init).
finetune() {
  local step=$1 seed=$2 dir="$OUT/sst2/step-$1/seed-$2" init=()
  [ -s "$dir/eval_results.txt" ] && return
  if [ "$step" != 0 ]; then
    [ -s "$M/ckpt-$step/bert_model.ckpt.index" ] || run "export:$step" \
      "$PYTHON" -m bert_tf.export_checkpoint \
      --model_dir="$M/pretrain/ckpt-$step" \
      --bert_config_file="$M/bert_config.json" --output_dir="$M/ckpt-$step"
    init=(--init_checkpoint="$M/ckpt-$step/bert_model.ckpt")
  fi
  run "finetune:$step:$seed" "$PYTHON" run_classifier.py --task_name=sst-2 \
    --data_dir="$OUT/sst2_data" --do_train=True --do_eval=True \
    --vocab_file="$M/vocab.txt" --do_lower_case=True \
    --bert_config_file="$M/bert_config.json" "${init[@]}" \
    --max_seq_length=64 --train_batch_size=16 --learning_rate=2e-4 \
    --num_train_epochs=5 --seed="$seed" --progress=False \
    --iterations_per_loop=125 \
    --overwrite_output_dir=True --output_dir="$dir"
}
for seed in $SEEDS; do
  finetune 0 "$seed"
  finetune "$PRETRAIN_STEPS" "$seed"
done
for step in $CURVE_STEPS; do
  for seed in $CURVE_SEEDS; do finetune "$step" "$seed"; done
done

"$PYTHON" examples/from_scratch_report.py --out_dir="$OUT"
