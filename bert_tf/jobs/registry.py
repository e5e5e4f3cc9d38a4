"""Every task and its pieces in each layer: the one place to find a task.

`TASKS[name]` names, for one task, its head key (`modeling/heads/`), Task
class (`tasks/`), record schema (`records/task_schemas`), `data_prep/`
folder, Job (`jobs/`), exporter (`export_saved_model --task=`), Python API
class, script and console scripts. `tests/jobs/test_registry.py` checks that
every name resolves and that every head, exporter, Job, data_prep folder,
script and console script of the tree belongs to a task here, so a task
cannot be half added. TensorFlow-free: names only, nothing is imported.

Example:
    from bert_tf.jobs.registry import TASKS
    print(TASKS["ner"].job)  # bert_tf.jobs.ner.NerJob
"""

import collections

TaskPieces = collections.namedtuple(
  "TaskPieces",
  "heads task schema data_prep job exporter api script console_scripts",
)

TASKS = {
  "squad": TaskPieces(
    heads=("squad",),
    task="bert_tf.tasks.squad.SquadTask",
    schema="squad_schema",
    data_prep="data_prep.squad",
    job="bert_tf.jobs.squad.SquadJob",
    exporter="squad",
    api="bert_tf.api.span_extractor.SpanExtractor",
    script="run_squad.py",
    console_scripts=(
      "bert-run-squad",
      "bert-squad-features",
      "bert-squad-predictions",
    ),
  ),
  "classifier": TaskPieces(
    heads=("classifier",),
    task="bert_tf.tasks.classification.ClassificationTask",
    schema="classifier_schema",
    data_prep="data_prep.classifier",
    job="bert_tf.jobs.classifier.ClassifierJob",
    exporter="classifier",
    api="bert_tf.api.classifier.TextClassifier",
    script="run_classifier.py",
    console_scripts=("bert-run-classifier", "bert-classifier-features"),
  ),
  # "ner" in every module and class name; `token_classifier` is the head's
  # TF1 scope (cls/token_classifier/*) that checkpoints hold, and
  # `TokenTagger` the API class (what its users do with it).
  "ner": TaskPieces(
    heads=("token_classifier",),
    task="bert_tf.tasks.ner.NerTask",
    schema="ner_schema",
    data_prep="data_prep.ner",
    job="bert_tf.jobs.ner.NerJob",
    exporter="ner",
    api="bert_tf.api.token_tagger.TokenTagger",
    script="run_ner.py",
    console_scripts=("bert-run-ner", "bert-ner-features"),
  ),
  "multiple_choice": TaskPieces(
    heads=("multiple_choice",),
    task="bert_tf.tasks.multiple_choice.MultipleChoiceTask",
    schema="multiple_choice_schema",
    data_prep="data_prep.multiple_choice",
    job="bert_tf.jobs.multiple_choice.MultipleChoiceJob",
    exporter="multiple_choice",
    api="bert_tf.api.multiple_choice.MultipleChoice",
    script="run_multiple_choice.py",
    console_scripts=(
      "bert-run-multiple-choice",
      "bert-multiple-choice-features",
    ),
  ),
  "pretraining": TaskPieces(
    heads=("masked_lm", "next_sentence"),
    task="bert_tf.tasks.pretraining.PretrainingTask",
    schema="pretraining_schema",
    data_prep="data_prep.pretraining",
    job="bert_tf.jobs.pretraining.PretrainingJob",
    exporter="pretraining",
    api=None,
    script="run_pretraining.py",
    console_scripts=("bert-run-pretraining", "bert-create-pretraining-data"),
  ),
  "feature_extraction": TaskPieces(
    heads=(),  # the encoder alone
    task="bert_tf.tasks.feature_extraction.FeatureExtractor",
    schema=None,
    data_prep="data_prep.extract_features",
    job="bert_tf.jobs.extract_features.FeatureExtractionJob",
    exporter="encoder",
    api=None,
    script="extract_features.py",
    console_scripts=("bert-extract-features",),
  ),
}

# Exporters and data jobs that serve every task rather than one.
SHARED_EXPORTERS = ("tfhub_encoder", "tfhub_preprocess")
SHARED_DATA_PREP = (
  "data_prep.common",
  "data_prep.beam",
  "data_prep.learn_vocab",
)
