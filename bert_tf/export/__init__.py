"""SavedModel exporters, one module per task kind, found through a registry.

An exporter module in this package defines a subclass of
`bert_tf.export.base.Exporter` decorated with `@register_exporter("name")`;
`python -m bert_tf.export_saved_model --task=name` then offers it, with its
`OPTIONS` as flags. Every module of the package is imported to find them,
so a new task kind is one new module and nothing else.

Example:
    exporter_cls = get_exporter("classifier")
    exporter = exporter_cls(config, "vocab.txt", True, 128,
                            {"labels": ["0", "1"], "text_b": True})
    exporter.restore("/tmp/mrpc_output")
    exporter.save("/tmp/mrpc_serving")
"""

import importlib
import pkgutil

from bert_tf.io_utils import InputError

_REGISTRY = {}


def register_exporter(name):
  """Class decorator: the exporter is `--task=name`."""

  def decorate(cls):
    cls.NAME = name
    _REGISTRY[name] = cls
    return cls

  return decorate


def registered_exporters():
  """{name: exporter class}, every exporter module imported."""
  for module in pkgutil.iter_modules(__path__):
    importlib.import_module("%s.%s" % (__name__, module.name))
  return dict(_REGISTRY)


def get_exporter(name):
  """The exporter class for `--task=name`."""
  exporters = registered_exporters()
  if name not in exporters:
    raise InputError(
      "--task=%s: unknown task; valid: %s"
      % (name, ", ".join(sorted(exporters)))
    )
  return exporters[name]
