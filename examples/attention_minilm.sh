#!/usr/bin/env bash
# What MRPC fine-tuning changes in all-MiniLM-L6-v2's attention, with the
# lowest 4 of its 6 layers frozen and without freezing: two short runs (one
# epoch over the first $PAIRS training pairs), then for each a before/after
# page, a per-head heat map (PNG) and CSV over 8 dev pairs, and screenshots
# of the pages in headless chromium.
#
#   bash examples/attention_minilm.sh   # WORK=out/attention_minilm
#   IMAGES=docs/images bash examples/attention_minilm.sh   # the docs' PNGs
#
# The runs are kept: a second call only redraws (delete $WORK to retrain).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
SHARED=${SHARED:-../shared}
MODEL=${MODEL:-$SHARED/models/all-MiniLM-L6-v2}
MRPC=${MRPC:-$SHARED/data/glue/MRPC}
WORK=${WORK:-out/attention_minilm}
PAIRS=${PAIRS:-480}
IMAGES=${IMAGES:-$WORK}
for path in "$MODEL" "$MRPC"; do
  if [ ! -e "$path" ]; then
    echo "ERROR: $path not found (set SHARED, MODEL or MRPC)" >&2
    exit 1
  fi
done
mkdir -p "$WORK/data" "$IMAGES"
CKPT=$WORK/minilm
if [ ! -e "$CKPT/bert_model.ckpt.index" ]; then
  $PY -m bert_tf.convert_checkpoint --input="$MODEL" --input_format=hf \
    --output_dir="$CKPT"
fi
head -n $((PAIRS + 1)) "$MRPC/train.tsv" > "$WORK/data/train.tsv"
# 8 dev pairs as extract_features.py reads them: "text_a ||| text_b".
awk -F'\t' 'NR > 1 && NR <= 9 { print $4 " ||| " $5 }' "$MRPC/dev.tsv" \
  > "$WORK/pairs8.txt"
head -n 1 "$WORK/pairs8.txt" > "$WORK/pairs1.txt"

for frozen in 4 0; do
  run=$WORK/mrpc_frozen$frozen
  what="lowest $frozen of 6 layers frozen"
  if [ $frozen = 0 ]; then what="no layer frozen"; fi
  if [ ! -e "$run/checkpoint" ]; then
    $PY run_classifier.py --task_name=mrpc --do_train \
      --data_dir="$WORK/data" --vocab_file="$CKPT/vocab.txt" \
      --bert_config_file="$CKPT/bert_config.json" \
      --init_checkpoint="$CKPT/bert_model.ckpt" --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=1 \
      --num_frozen_layers=$frozen --seed=1 --output_dir="$run"
  fi
  for n in 1 8; do
    $PY -m bert_tf.plot_attention --init_checkpoint="$CKPT/bert_model.ckpt" \
      --compare_checkpoint="$run" --bert_config_file="$CKPT/bert_config.json" \
      --vocab_file="$CKPT/vocab.txt" --input_file="$WORK/pairs$n.txt" \
      --title="all-MiniLM-L6-v2 before / after MRPC fine-tuning, $what" \
      --output_file="$WORK/frozen${frozen}_pairs$n.html"
  done
  $PY -m bert_tf.plot_attention --init_checkpoint="$CKPT/bert_model.ckpt" \
    --compare_checkpoint="$run" --bert_config_file="$CKPT/bert_config.json" \
    --vocab_file="$CKPT/vocab.txt" --input_file="$WORK/pairs8.txt" \
    --title="all-MiniLM-L6-v2, MRPC, $what: change per head (8 dev pairs)" \
    --divergence_file="$WORK/frozen$frozen.csv" \
    --output_file="$IMAGES/attention_change_frozen$frozen.png"
done

# Screenshots: a view of the 8-pair page, opened by its URL fragment, given
# time to draw; 256 colours keep the PNG small.
shot() {  # shot PAGE VIEW PNG
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1200,900 --virtual-time-budget=10000 --screenshot="$3" \
    "file://$(realpath "$1")#$2" > /dev/null 2>&1
  $PY -c "import sys; from PIL import Image
Image.open(sys.argv[1]).convert('RGB').quantize(256).save(sys.argv[1], optimize=True)" "$3"
  echo "wrote $3 ($(wc -c < "$3") bytes)"
}
if command -v chromium > /dev/null; then
  shot "$WORK/frozen4_pairs8.html" "head&model=1&layer=5&heads=0,9&special=0" \
    "$IMAGES/attention_head_view.png"
  shot "$WORK/frozen4_pairs8.html" model "$IMAGES/attention_model_view.png"
  shot "$WORK/frozen4_pairs8.html" compare "$IMAGES/attention_compare_frozen4.png"
  shot "$WORK/frozen0_pairs8.html" compare "$IMAGES/attention_compare_frozen0.png"
else
  echo "no chromium: screenshots skipped (make browser installs it)"
fi
ls -l "$WORK"/*.html
