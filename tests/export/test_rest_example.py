"""The README's TF Serving REST example: its request body's instances go to
an exported MRPC classifier's `serving_default` exactly as TF Serving would
pass them (row format -> one string tensor per input), and the answer has
the README response's form."""

import json
import re

import pytest

from bert_tf.export.classifier import ClassifierExporter
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.classification import ClassifierModel
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import serve

pytestmark = pytest.mark.process  # starts programs


def _readme_json(marker):
  readme = (REPO / "README.md").read_text()
  match = re.search(
    r"<!-- %s -->\n```json\n(.*?)```" % marker, readme, re.DOTALL
  )
  assert match, marker
  return json.loads(match.group(1))


def test_readme_rest_example(tmp_path, head_checkpoint):
  request, response = (
    _readme_json("rest-request"),
    _readme_json("rest-response"),
  )
  config = BertConfig.from_json_file(
    str(FIXTURES / "encoder" / "ckpt_b" / "bert_config.json")
  )
  # ckpt_b's encoder + a 2-label head: an MRPC-shaped model.
  _, prefix = head_checkpoint("ckpt_b", ClassifierModel, 2)
  vocab = str(FIXTURES / "encoder" / "vocab_small.txt")
  exporter = ClassifierExporter(config, vocab, True, 128, {"task_name": "mrpc"})
  exporter.restore(prefix)
  export_dir = exporter.save(str(tmp_path / "mrpc" / "1"))

  assert request["signature_name"] == "serving_default"
  instances = request["instances"]
  columns = {
    name: [instance[name] for instance in instances] for name in instances[0]
  }
  (answer,) = serve(export_dir, [columns])
  assert set(answer) == set(response["predictions"][0])
  assert len(answer["label"]) == len(instances) == len(response["predictions"])
  for i, label in enumerate(answer["label"]):
    probabilities = answer["probabilities"][i]
    assert label in ("0", "1") and len(probabilities) == 2
    assert label == str(probabilities.index(max(probabilities)))
    assert abs(sum(probabilities) - 1) < 1e-6
