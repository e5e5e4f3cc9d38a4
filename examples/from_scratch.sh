#!/usr/bin/env bash
# Your own BERT from raw text, measured against two baselines:
#   corpus -> learned WordPiece vocabulary (8k) -> create_pretraining_data
#   -> a small BERT pre-trained for a fixed budget (whole-word dynamic
#   masking) -> fine-tuned on an SST-2 slice,
# next to the same model pre-trained the same way with Google's uncased
# vocabulary, and the same model fine-tuned from random init (no
# pre-training). Prints one table: masked-LM and next-sentence accuracy on
# held-out documents of the corpus, and SST-2 dev accuracy; plots each
# pre-training run with bert_tf.plot_run.
#
#   bash examples/from_scratch.sh          # about 25-60 min on 2 CPU cores
#
# Environment (defaults in brackets): OUTPUT_DIR [/tmp/from_scratch], CORPUS
# [../shared/data/corpus/tiny_pretrain_corpus.txt], GLUE_DIR
# [../shared/data/glue], GOOGLE_VOCAB [tests/fixtures/vocab_uncased.txt],
# VOCAB_SIZE [8000], PRETRAIN_STEPS [600: the fixed budget, batch 32 x 128
# tokens], TRAIN_EXAMPLES [4000 SST-2 training sentences], MODELS
# ["learned google random"; e.g. MODELS=google in a second shell runs that
# branch in parallel], PYTHON.
# Finished steps are skipped when the script runs again in the same
# OUTPUT_DIR (delete it to start over).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
OUT=${OUTPUT_DIR:-/tmp/from_scratch}
CORPUS=${CORPUS:-../shared/data/corpus/tiny_pretrain_corpus.txt}
GLUE_DIR=${GLUE_DIR:-../shared/data/glue}
GOOGLE_VOCAB=${GOOGLE_VOCAB:-tests/fixtures/vocab_uncased.txt}
VOCAB_SIZE=${VOCAB_SIZE:-8000}
PRETRAIN_STEPS=${PRETRAIN_STEPS:-600}
TRAIN_EXAMPLES=${TRAIN_EXAMPLES:-4000}
MODELS=${MODELS:-learned google random}
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
mkdir -p "$OUT/data" "$OUT/sst2" "$OUT/learned" "$OUT/google" "$OUT/random"

step() { echo "== $(date +%T) $*"; }

# Held-out documents for the masked-LM / next-sentence evaluation: the last
# 5% of the corpus's documents (blank-line separated).
if [ ! -s "$OUT/data/heldout.txt" ]; then
  docs=$(grep -c '^$' "$CORPUS" || true)
  awk -v cut=$(( docs * 95 / 100 )) -v train="$OUT/data/train.txt" \
      -v heldout="$OUT/data/heldout.txt" \
      '/^$/ { blank++ } { print > (blank < cut ? train : heldout) }' "$CORPUS"
fi

# An SST-2 slice: the first TRAIN_EXAMPLES training sentences, the full dev.
head -n $(( TRAIN_EXAMPLES + 1 )) "$GLUE_DIR/SST-2/train.tsv" > "$OUT/sst2/train.tsv"
cp "$GLUE_DIR/SST-2/dev.tsv" "$OUT/sst2/dev.tsv"

wants() { [[ " $MODELS " == *" $1 "* ]]; }

if { wants learned || wants random; } && [ ! -s "$OUT/learned/vocab.txt" ]; then
  step "learn a $VOCAB_SIZE WordPiece vocabulary"
  "$PYTHON" -m data_prep.learn_vocab --input_file="$OUT/data/train.txt" \
    --vocab_size="$VOCAB_SIZE" --num_unused_tokens=99 --do_lower_case=True \
    --output_file="$OUT/learned/vocab.txt"
fi
cp "$GOOGLE_VOCAB" "$OUT/google/vocab.txt"
if wants learned || wants random; then
  cp "$OUT/learned/vocab.txt" "$OUT/random/vocab.txt"
fi

# The small BERT: examples/bert_config_tiny.json (2 layers, H=128, 2 heads)
# with the vocabulary's size.
for name in $MODELS; do
  "$PYTHON" - "$OUT/$name" <<'EOF'
import json, sys
folder = sys.argv[1]
config = json.load(open("examples/bert_config_tiny.json"))
config["vocab_size"] = sum(1 for _ in open(folder + "/vocab.txt"))
json.dump(config, open(folder + "/bert_config.json", "w"), indent=2)
EOF
done

for name in $MODELS; do
  [ "$name" = random ] && continue
  dir="$OUT/$name"
  for split in train heldout; do
    if [ ! -s "$dir/$split.tfrecord" ]; then
      step "$name: pre-training data ($split)"
      "$PYTHON" -m data_prep.create_pretraining_data \
        --input_file="$OUT/data/$split.txt" --output_file="$dir/$split.tfrecord" \
        --vocab_file="$dir/vocab.txt" --do_lower_case=True \
        --max_seq_length=128 --max_predictions_per_seq=20 \
        --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=1 \
        --do_whole_word_mask=True
    fi
  done
  if [ ! -s "$dir/pretrain/eval_results.txt" ]; then
    step "$name: pre-train $PRETRAIN_STEPS steps (whole-word dynamic masking)"
    "$PYTHON" run_pretraining.py --input_file="$dir/train.tfrecord" \
      --output_dir="$dir/pretrain" --do_train=True \
      --bert_config_file="$dir/bert_config.json" --vocab_file="$dir/vocab.txt" \
      --dynamic_masking=True --do_whole_word_mask=True \
      --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \
      --num_train_steps="$PRETRAIN_STEPS" \
      --num_warmup_steps=$(( PRETRAIN_STEPS / 10 )) --learning_rate=1e-3 \
      --save_checkpoints_steps=200 --iterations_per_loop=50 --seed=1 \
      --progress=False
    step "$name: evaluate on held-out documents"
    "$PYTHON" run_pretraining.py --input_file="$dir/heldout.tfrecord" \
      --output_dir="$dir/pretrain" --do_eval=True \
      --bert_config_file="$dir/bert_config.json" --eval_batch_size=32 \
      --max_seq_length=128 --max_predictions_per_seq=20 --max_eval_steps=100
    "$PYTHON" -m bert_tf.export_checkpoint --model_dir="$dir/pretrain" \
      --bert_config_file="$dir/bert_config.json" --output_dir="$dir/ckpt"
    "$PYTHON" -m bert_tf.plot_run --output_dir="$dir/pretrain" \
      --title="pre-training, $name vocabulary"
  fi
done

for name in $MODELS; do
  dir="$OUT/$name"
  init=()
  [ "$name" != random ] && init=(--init_checkpoint="$dir/ckpt/bert_model.ckpt")
  if [ ! -s "$dir/sst2/eval_results.txt" ]; then
    step "$name: fine-tune on SST-2 ($TRAIN_EXAMPLES sentences)"
    "$PYTHON" run_classifier.py --task_name=sst-2 --data_dir="$OUT/sst2" \
      --do_train=True --do_eval=True --vocab_file="$dir/vocab.txt" \
      --do_lower_case=True --bert_config_file="$dir/bert_config.json" \
      "${init[@]}" --max_seq_length=64 --train_batch_size=32 \
      --learning_rate=2e-4 --num_train_epochs=3 --seed=1 --progress=False \
      --output_dir="$dir/sst2"
  fi
done

"$PYTHON" - "$OUT" "$PRETRAIN_STEPS" <<'EOF'
import os, sys
out, steps = sys.argv[1], sys.argv[2]
def results(path):
  if not os.path.exists(path):
    return {}
  return dict(line.strip().split(" = ") for line in open(path) if " = " in line)
print("\nfrom scratch: %s pre-training steps (batch 32 x 128), SST-2 dev "
      "accuracy after fine-tuning" % steps)
print("%-22s %7s %13s %10s %8s" % ("model", "vocab", "masked-LM acc",
                                  "NSP acc", "SST-2"))
for name, label in [("learned", "learned vocab"), ("google", "Google vocab"),
                    ("random", "random init")]:
  vocab = os.path.join(out, name, "vocab.txt")
  if not os.path.exists(vocab):
    continue
  pre = results(os.path.join(out, name, "pretrain", "eval_results.txt"))
  dev = results(os.path.join(out, name, "sst2", "eval_results.txt"))
  size = sum(1 for _ in open(vocab))
  print("%-22s %7d %13s %10s %8s" % (
      label, size, pre.get("masked_lm_accuracy", "-")[:6],
      pre.get("next_sentence_accuracy", "-")[:6],
      dev.get("eval_accuracy", "-")[:6]))
EOF
