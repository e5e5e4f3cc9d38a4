"""One side of `benchmarks/speed/peer.py`: bert_tf or HF PyTorch in one dtype.

Started by peer.py as `python benchmarks/speed/peer_worker.py SIDE DTYPE` with
PYTHONPATH set to the bert_tf tree under test (the working tree, or an
extracted older commit), so this file imports only bert_tf names that older
trees have too. It answers one JSON line per request on stdin:

  {"op": "inference"|"training", "shape": [seq, batch], "repeats": n}
      -> {"rates": [examples/s per measurement]} (the first request of a
      shape builds and warms up; peer.py sends it before the rounds)
  {"op": "serving", "target": SavedModel dir | HF folder, "head": .npz,
   "max_seq_length": n}  -> {} (loads the serving path)
  {"op": "single"|"batch", "pairs": [[a, b], ...]}
      -> {"seconds": [per request]} / {"seconds": [the whole batch]}
  {"op": "probabilities", "pairs": [...]} -> {"probabilities": [[p0, p1]]}
  {"op": "drop"} -> {} (frees the models before the next measure)

Whatever a library prints goes to stderr: the protocol has stdout alone.
"""

import gc
import json
import os
import sys
import time

_BASE = dict(
  vocab_size=30522,
  hidden_size=768,
  num_hidden_layers=12,
  num_attention_heads=12,
  intermediate_size=3072,
)


def _timed(fn, repeats, examples):
  """examples/s of `repeats` calls of fn, per call."""
  rates = []
  for _ in range(repeats):
    start = time.perf_counter()
    fn()
    rates.append(examples / (time.perf_counter() - start))
  return rates


class BertTf:
  """bert_tf: the SQuAD model in a tf.function, the Trainer's own loop, and
  the exported raw-text SavedModel."""

  def __init__(self, dtype):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras  # pylint: disable=g-import-not-at-top
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from bert_tf.modeling.bert_config import BertConfig  # pylint: disable=g-import-not-at-top

    self.tf, self.keras = tf, keras
    self.policy = "mixed_bfloat16" if dtype == "bfloat16" else "float32"
    self.config = BertConfig.from_dict(dict(_BASE))
    self.models = {}

  def _built(self, name, build):
    if name not in self.models:
      self.keras.mixed_precision.set_global_policy(self.policy)
      try:
        self.models[name] = build()
      finally:
        self.keras.mixed_precision.set_global_policy("float32")
    return self.models[name]

  def _features(self, seq, batch):
    tf = self.tf
    return {
      "input_ids": tf.random.uniform([batch, seq], 0, 30522, tf.int32, seed=1),
      "input_mask": tf.ones([batch, seq], tf.int32),
      "segment_ids": tf.zeros([batch, seq], tf.int32),
      "start_positions": tf.fill([batch], 5),
      "end_positions": tf.fill([batch], 9),
    }

  def inference(self, seq, batch):
    from bert_tf.tasks.squad import SquadModel  # pylint: disable=g-import-not-at-top

    model = self._built("inference", lambda: SquadModel(self.config))
    features = self._features(seq, batch)

    @self.tf.function
    def forward(features):
      return self.tf.reduce_sum(model(features, training=False)["start_logits"])

    return lambda: float(forward(features))

  def training(self, seq, batch):
    import tempfile  # pylint: disable=g-import-not-at-top

    from bert_tf.tasks.squad import SquadTask  # pylint: disable=g-import-not-at-top
    from bert_tf.training import optimization  # pylint: disable=g-import-not-at-top
    from bert_tf.training.trainer import Trainer  # pylint: disable=g-import-not-at-top

    tf = self.tf
    trainer = self._built(
      "training",
      lambda: Trainer(
        SquadTask(self.config, 128),
        lambda: optimization.create_optimizer(1e-4, 10**6, 10),
        tempfile.mkdtemp(prefix="peer_trainer_"),
        iterations_per_loop=1,
        save_checkpoints_steps=0,
        progress=False,
      ),
    )
    features = self._features(seq, batch)
    iterator = iter(
      trainer.strategy.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.from_tensors(features).repeat()
      )
    )
    # The loop itself: Trainer.train would write a 1.3 GB checkpoint.
    # pylint: disable=protected-access
    trainer._train_loop = trainer._train_loop or trainer._make_train_loop()
    one = tf.constant(1)
    return lambda: float(trainer._train_loop(iterator, one)[0])

  def serving(self, target, head, max_seq_length):
    del head, max_seq_length  # the SavedModel holds its head and length
    import tensorflow_text  # noqa: F401  pylint: disable=g-import-not-at-top

    tf = self.tf
    signature = tf.saved_model.load(target).signatures["serving_default"]

    def predict(pairs):
      out = signature(
        text_a=tf.constant([a for a, _ in pairs]),
        text_b=tf.constant([b for _, b in pairs]),
      )
      return out["probabilities"].numpy()

    return predict


class Torch:
  """HF transformers on PyTorch: BertForQuestionAnswering (sdpa attention,
  autocast for bfloat16), AdamW with clipping, and the fast tokenizer with
  BertForSequenceClassification for serving."""

  def __init__(self, dtype):
    import torch  # pylint: disable=g-import-not-at-top
    import transformers  # pylint: disable=g-import-not-at-top

    if os.environ.get("PEER_TORCH_THREADS"):
      torch.set_num_threads(int(os.environ["PEER_TORCH_THREADS"]))
    self.torch, self.transformers = torch, transformers
    self.bf16 = dtype == "bfloat16"
    self.models = {}

  def _autocast(self):
    return self.torch.autocast("cpu", self.torch.bfloat16, enabled=self.bf16)

  def _model(self):
    if "squad" not in self.models:
      self.torch.manual_seed(1)
      config = self.transformers.BertConfig(
        hidden_act="gelu_pytorch_tanh",  # the original's tanh GELU, fused
        attn_implementation="sdpa",
        **_BASE,
      )
      self.models["squad"] = self.transformers.BertForQuestionAnswering(config)
    return self.models["squad"]

  def _inputs(self, seq, batch):
    torch = self.torch
    generator = torch.Generator().manual_seed(1)
    return dict(
      input_ids=torch.randint(0, 30522, (batch, seq), generator=generator),
      attention_mask=torch.ones(batch, seq, dtype=torch.long),
      token_type_ids=torch.zeros(batch, seq, dtype=torch.long),
    )

  def inference(self, seq, batch):
    model, inputs = self._model().eval(), self._inputs(seq, batch)

    def forward():
      with self.torch.inference_mode(), self._autocast():
        return float(model(**inputs).start_logits.float().sum())

    return forward

  def training(self, seq, batch):
    torch = self.torch
    model = self._model().train()
    if "optimizer" not in self.models:
      self.models["optimizer"] = torch.optim.AdamW(
        model.parameters(), lr=1e-4, weight_decay=0.01
      )
    optimizer = self.models["optimizer"]
    inputs = self._inputs(seq, batch)
    inputs["start_positions"] = torch.full((batch,), 5)
    inputs["end_positions"] = torch.full((batch,), 9)

    def step():
      with self._autocast():
        loss = model(**inputs).loss
      loss.backward()
      torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
      optimizer.step()
      optimizer.zero_grad(set_to_none=True)
      return float(loss.detach())

    return step

  def serving(self, target, head, max_seq_length):
    import numpy as np  # pylint: disable=g-import-not-at-top

    torch, transformers = self.torch, self.transformers
    tokenizer = transformers.BertTokenizerFast(
      os.path.join(target, "vocab.txt"), do_lower_case=True
    )
    model = transformers.BertForSequenceClassification.from_pretrained(
      target, num_labels=2, attn_implementation="sdpa"
    ).eval()
    weights = np.load(head)
    with torch.no_grad():  # the bert_tf model's head, so the answers agree
      model.classifier.weight.copy_(torch.from_numpy(weights["weight"]))
      model.classifier.bias.copy_(torch.from_numpy(weights["bias"]))

    def predict(pairs):
      inputs = tokenizer(
        [a for a, _ in pairs],
        [b for _, b in pairs],
        truncation="longest_first",
        max_length=max_seq_length,
        # As the SavedModel, which runs on the request's longest row.
        padding="longest",
        return_tensors="pt",
      )
      with torch.inference_mode(), self._autocast():
        logits = model(**inputs).logits.float()
      return torch.softmax(logits, -1).numpy()

    return predict


def _serve(state, request):
  predict = state["predict"]
  op, pairs = request["op"], request.get("pairs")
  if op == "single":
    seconds = []
    for pair in pairs:
      start = time.perf_counter()
      predict([pair])
      seconds.append(time.perf_counter() - start)
    return {"seconds": seconds}
  if op == "batch":
    start = time.perf_counter()
    predict(pairs)
    return {"seconds": [time.perf_counter() - start]}
  return {"probabilities": predict(pairs).tolist()}


def main(side, dtype):
  protocol = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)  # library prints go to stderr
  engine = (BertTf if side == "bert_tf" else Torch)(dtype)
  state = {"timers": {}}
  for line in sys.stdin:
    request = json.loads(line)
    op = request["op"]
    reply = {}
    if op in ("inference", "training"):
      seq, batch = request["shape"]
      key = (op, seq, batch)
      if key not in state["timers"]:
        fn = state["timers"][key] = getattr(engine, op)(seq, batch)
        fn()  # traces and warms up
      reply["rates"] = _timed(state["timers"][key], request["repeats"], batch)
    elif op == "serving":
      state["predict"] = engine.serving(
        request["target"], request["head"], request["max_seq_length"]
      )
    elif op in ("single", "batch", "probabilities"):
      reply = _serve(state, request)
    elif op == "drop":
      state = {"timers": {}}
      engine.models.clear()
      gc.collect()
    protocol.write(json.dumps(reply) + "\n")
    protocol.flush()


if __name__ == "__main__":
  if len(sys.argv) != 3:
    sys.exit("usage: peer_worker.py SIDE DTYPE (started by peer.py)")
  main(*sys.argv[1:3])
