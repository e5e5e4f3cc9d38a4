"""Each script's Job config has one field per flag of the script, with the
flag's default and type, and `from_flags` carries every parsed value over.

The flags are defined in a fresh process per script (a script defines them
into absl's global FLAGS, once)."""

import dataclasses
import json
import textwrap

import pytest

from bert_tf.jobs import classifier
from bert_tf.jobs import extract_features
from bert_tf.jobs import multiple_choice
from bert_tf.jobs import ner
from bert_tf.jobs import pretraining
from bert_tf.jobs import squad
from tests.helpers import processes

pytestmark = pytest.mark.process

CONFIGS = {
  "run_classifier": classifier.ClassifierConfig,
  "run_squad": squad.SquadConfig,
  "run_ner": ner.NerConfig,
  "run_multiple_choice": multiple_choice.MultipleChoiceConfig,
  "run_pretraining": pretraining.PretrainingConfig,
  "extract_features": extract_features.FeatureExtractionConfig,
}

# The flags every absl program has, and the runner's own.
_PROGRAM_FLAGS = ("verbosity", "help", "helpfull", "helpshort", "helpxml")

_DUMP = textwrap.dedent(
  """
  import importlib, json, sys
  from absl import flags
  script = importlib.import_module(sys.argv[1])
  script.define_flags()
  print(json.dumps({
    f.name: [f.default, f.flag_type()]
    for module, defined in flags.FLAGS.flags_by_module_dict().items()
    if not module.startswith(("absl", "tensorflow"))
    for f in defined
  }))
  """
)

_TYPES = {
  "bool": bool,
  "int": int,
  "float": float,
  "string": str,
  "enum": str,
  "comma": list,  # "comma separated list of strings"
}


def _flags_of(script):
  result = processes.run(["-c", _DUMP, script])
  assert result.returncode == 0, result.stderr[-2000:]
  return json.loads(result.stdout)


def _allows(annotation, kind):
  text = str(annotation)
  return _TYPES[kind].__name__ in text.replace("list[str]", "list")


@pytest.mark.parametrize("script", sorted(CONFIGS))
def test_one_field_per_flag_with_its_default(script):
  config = CONFIGS[script]
  fields = {
    f.name: f
    for f in dataclasses.fields(config)
    if f.name not in config.NOT_FLAGS
  }
  defined = {
    name: value
    for name, value in _flags_of(script).items()
    if name not in _PROGRAM_FLAGS
  }
  assert sorted(fields) == sorted(defined)
  for name, (default, kind) in defined.items():
    assert fields[name].default == default, name
    assert _allows(fields[name].type, kind.split()[0]), (name, kind)


def test_from_flags_carries_every_value():
  from absl import flags

  values = flags.FlagValues()
  flags.DEFINE_integer("doc_stride", 128, "", flag_values=values)
  flags.DEFINE_bool("version_2_with_negative", False, "", flag_values=values)
  flags.DEFINE_string("predict_file", None, "", flag_values=values)
  values(["prog", "--doc_stride=64", "--version_2_with_negative"])
  config = squad.SquadConfig.from_flags(values)
  assert config.doc_stride == 64
  assert config.version_2_with_negative is True
  assert config.predict_file is None
  # Fields whose flag the program does not define keep their defaults.
  assert config.max_seq_length == 384 and config.examples is None
