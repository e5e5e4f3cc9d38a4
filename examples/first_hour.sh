#!/usr/bin/env bash
# The README's "first hour with a real model", timed: convert MiniLM,
# fine-tune MRPC with evaluation during training and a best checkpoint,
# plot the run, export from best/, predict a JSON-lines file.
#
#   bash examples/first_hour.sh            # WORK=out/first_hour
#   EPOCHS=3 bash examples/first_hour.sh   # the full recipe (1 epoch default)
#
# Each step prints `== <command>: <seconds> s, <lines> console lines`; the
# console of each step is kept in $WORK/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
SHARED=${SHARED:-../shared}
MODEL=${MODEL:-$SHARED/models/all-MiniLM-L6-v2}
MRPC=${MRPC:-$SHARED/data/glue/MRPC}
WORK=${WORK:-out/first_hour}
EPOCHS=${EPOCHS:-1}
for path in "$MODEL" "$MRPC"; do
  if [ ! -e "$path" ]; then
    echo "ERROR: $path not found (set SHARED, MODEL or MRPC)" >&2
    exit 1
  fi
done
rm -rf "$WORK"
mkdir -p "$WORK/logs"

step() {  # step NAME COMMAND...: runs it, keeps its console, times it
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" > "$WORK/logs/$name.txt" 2>&1 || {
    cat "$WORK/logs/$name.txt" >&2
    exit 1
  }
  end=$(date +%s.%N)
  printf '== %s: %.0f s, %d console lines\n' "$name" \
    "$(echo "$end - $start" | bc)" "$(wc -l < "$WORK/logs/$name.txt")"
}

step convert "$PY" -m bert_tf.convert_checkpoint --input="$MODEL" \
  --input_format=hf --output_dir="$WORK/minilm"
step fine_tune "$PY" run_classifier.py --task_name=mrpc --do_train \
  --do_eval --data_dir="$MRPC" --vocab_file="$WORK/minilm/vocab.txt" \
  --bert_config_file="$WORK/minilm/bert_config.json" \
  --init_checkpoint="$WORK/minilm/bert_model.ckpt" --max_seq_length=128 \
  --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs="$EPOCHS" \
  --eval_every_steps=40 --best_metric=eval_accuracy \
  --predict_checkpoint=best --seed=1 --output_dir="$WORK/mrpc"
step plot "$PY" -m bert_tf.plot_run --output_dir="$WORK/mrpc" \
  --output_file="$WORK/mrpc.png"
step export "$PY" -m bert_tf.export_saved_model --checkpoint="$WORK/mrpc" \
  --export_dir="$WORK/mrpc_sm"
head -n 20 "$MRPC/dev.tsv" | tail -n 19 | "$PY" -c '
import json, sys
for line in sys.stdin:
  cols = line.rstrip("\n").split("\t")
  print(json.dumps({"id": cols[1] + "-" + cols[2], "text_a": cols[3],
                    "text_b": cols[4]}))' > "$WORK/pairs.jsonl"
step predict "$PY" -m bert_tf.predict --export_dir="$WORK/mrpc_sm" \
  --input_file="$WORK/pairs.jsonl" --output_file="$WORK/predictions.jsonl"
cat "$WORK/mrpc/eval_results.txt"
head -n 3 "$WORK/predictions.jsonl"
