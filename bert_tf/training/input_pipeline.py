"""tf.data input from TFRecords with the original feature specs.

The specs are the Task's (`Task.feature_spec`, from the records' schemas in
`bert_tf.records.task_schemas`, the ones data_prep writes with).

Training datasets are built per input pipeline (one per worker) through
`strategy.distribute_datasets_from_function`: each pipeline reads its shard,
batches at the per-replica size of the *global* batch-size flag and shuffles
like the original (`repeat` + `shuffle(100)`; pre-training also shuffles and
interleaves files). Eval/predict datasets are batched at the global size and
keep the last partial batch (the `Trainer` pads it). `check_records` stops
at a batch holding a record a task cannot use; `refused_record` then reads
the files again to name the file, the record and the field.

Example:
    dataset_fn = training_dataset_fn(["out/train.tf_record"],
                                     task.feature_spec(True), 32)
    trainer.train(dataset_fn, num_train_steps)
    eval_ds = eval_dataset(["out/eval.tf_record"], task.feature_spec(False),
                           8)
"""

import math

import tensorflow as tf

from bert_tf.io_utils import first_line
from bert_tf.io_utils import InputError
from bert_tf.io_utils import is_remote
from bert_tf.records import tfrecord_file

_AUTOTUNE = tf.data.AUTOTUNE
_SHUFFLE_BUFFER = 100
# Marks the error `check_records` raises among TF's errors.
_REFUSED = "refused record: "


def decode_record(record, name_to_features):
  """Parses one example; int64 becomes int32 (TPU-friendly, as the original)."""
  example = tf.io.parse_single_example(record, name_to_features)
  return {
    k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v
    for k, v in example.items()
  }


def _parse_and_batch(dataset, name_to_features, batch_size, drop_remainder):
  dataset = dataset.map(
    lambda r: decode_record(r, name_to_features), num_parallel_calls=_AUTOTUNE
  )
  return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(
    _AUTOTUNE
  )


def _records(
  input_files, interleave_files, num_shards, shard_index, deterministic
):
  """The (repeated) record stream of one pipeline, sharded across pipelines."""
  input_files = list(input_files)
  if not interleave_files:
    records = tf.data.TFRecordDataset(input_files)
    return records.shard(num_shards, shard_index).repeat()
  files = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
  shard_files = len(input_files) >= num_shards
  if shard_files:
    files = files.shard(num_shards, shard_index)
  files = files.repeat().shuffle(buffer_size=len(input_files))
  records = files.interleave(
    tf.data.TFRecordDataset,
    cycle_length=min(4, len(input_files)),
    num_parallel_calls=_AUTOTUNE,
    deterministic=deterministic,
  )
  return records if shard_files else records.shard(num_shards, shard_index)


def without_autotune(dataset):
  """`dataset` with tf.data autotuning off.

  The autotune thread does not wake up when its iterator is deleted: it
  sleeps out its optimization period (doubling up to a minute), so every
  run would stall that long after its last step. `AUTOTUNE` map and
  prefetch sizes fall back to the core count and the prefetch buffer's own
  tuning, which keep the input ahead of BERT's steps.
  """
  options = tf.data.Options()
  options.autotune.enabled = False
  return dataset.with_options(options)


def training_dataset_fn(
  input_files,
  name_to_features,
  global_batch_size,
  interleave_files=False,
  deterministic=False,
  shuffle_buffer=_SHUFFLE_BUFFER,
):
  """Returns `dataset_fn(input_context)` for `Trainer.train`.

  Args:
    input_files: TFRecord paths.
    name_to_features: one of the `*_features` specs.
    global_batch_size: the batch-size flag (all replicas together).
    interleave_files: pre-training style (shuffle files, interleave 4).
    deterministic: keep the interleave order fixed (pass `--deterministic`);
      otherwise it is "sloppy" like the original.
    shuffle_buffer: records shuffled at a time; the original's 100 suits
      files written in shuffled order.
  """

  def dataset_fn(input_context=None):
    ctx = input_context or tf.distribute.InputContext()
    batch_size = ctx.get_per_replica_batch_size(global_batch_size)
    records = _records(
      input_files,
      interleave_files,
      ctx.num_input_pipelines,
      ctx.input_pipeline_id,
      deterministic,
    )
    records = records.shuffle(buffer_size=shuffle_buffer)
    return _parse_and_batch(records, name_to_features, batch_size, True)

  dataset_fn.input_files = list(input_files)  # for `damaged_input`
  return dataset_fn


def check_records(batch, record_check):
  """`batch` (parsed records) once `record_check` passes each record.

  `record_check(batch) -> (refused, describe)`: [batch] bool, and
  `describe(row)` saying why that record is refused, naming the field. A
  refused record fails the step with an error `refused_record` turns into
  a one-line InputError.
  """
  refused, describe = record_check(batch)

  def fail():
    row = tf.argmax(tf.cast(refused, tf.int32))
    message = tf.strings.join([_REFUSED, describe(row)])
    with tf.control_dependencies([tf.debugging.Assert(False, [message])]):
      return tf.constant(False)

  passed = tf.cond(tf.reduce_any(refused), fail, lambda: tf.constant(True))
  with tf.control_dependencies([passed]):
    return {name: tf.identity(value) for name, value in batch.items()}


def refused_record(error, input_files, name_to_features, record_check, flag):
  """For the error `check_records` raised while training on
  `input_files`: the InputError naming `--flag`, the first refused record's
  file and index, and the field, found by reading the files again (only
  when training failed); None for any other error."""
  if not isinstance(error, tf.errors.InvalidArgumentError):
    return None
  if _REFUSED not in error.message:
    return None
  for path in input_files:
    start = 0
    for batch in eval_dataset([path], name_to_features, 1024):
      refused, describe = record_check(batch)
      if tf.reduce_any(refused):
        row = int(tf.argmax(tf.cast(refused, tf.int32)))
        return InputError(
          "--%s %s: record %d: %s"
          % (flag, path, start + row, describe(row).numpy().decode())
        )
      start += len(refused)
  # Not found again (a file changed meanwhile): what the step said.
  said = first_line(error.message.split(_REFUSED, 1)[1]).split("]")[0]
  return InputError("--%s: a record: %s" % (flag, said))


def record_files(patterns, flag_name):
  """Comma-separated globs (e.g. Beam's `out/train.tf_record-*` shards)
  -> the files, sorted within each glob; the framing of each local file
  is walked (`tfrecord_file.check_framing`): TensorFlow reads a file cut
  inside a record header as a shorter file, and the run would train on part
  of its data and exit 0.

  Raises:
    InputError: a glob that matches no file, or a file cut or damaged.
  """
  files = []
  for pattern in patterns.split(","):
    matches = sorted(tf.io.gfile.glob(pattern))
    if not matches:
      raise InputError("--%s: no file matches %r" % (flag_name, pattern))
    files.extend(matches)
  for path in files:
    if not is_remote(path):
      _, problem = tfrecord_file.check_framing(path)
      if problem:
        raise InputError("--%s: %s: %s" % (flag_name, path, problem))
  return files


def count_records(input_files, name_to_features, flag_name, value_limits=None):
  """The number of records in `input_files`, after checking that the first
  one has the features (names, types and lengths) the task reads.

  `value_limits` {feature: n}: every value must lie in [0, n), e.g. label
  ids the head has outputs for (records written with another label list);
  checked file by file, so the message names the file and record.
  """
  records = tf.data.TFRecordDataset(list(input_files))
  try:
    for record in records.take(1):
      tf.io.parse_single_example(record, name_to_features)
    if not value_limits:
      return int(records.reduce(0, lambda count, _: count + 1))
    return sum(
      _count_within(path, name_to_features, value_limits, flag_name)
      for path in input_files
    )
  except tf.errors.DataLossError as e:
    raise InputError("--%s: %s" % (flag_name, damaged_input(input_files, e)))
  except tf.errors.InvalidArgumentError as e:
    raise InputError(
      "--%s=%s: records without this task's features (%s); "
      "other --max_seq_length?"
      % (flag_name, input_files[0], first_line(e.message))
    )


def _count_within(path, name_to_features, value_limits, flag_name):
  """Records of one file; raises InputError at the first value outside its
  `value_limits` range."""
  limits = sorted(value_limits.items())
  spec = {name: name_to_features[name] for name, _ in limits}

  def outside(record):
    values = tf.io.parse_single_example(record, spec)
    return tf.reduce_any(
      [
        tf.reduce_any((values[name] < 0) | (values[name] >= limit))
        for name, limit in limits
      ]
    )

  count, first_bad = (
    tf.data.TFRecordDataset(path)
    .map(outside)
    .enumerate()
    .reduce(
      (tf.constant(0, tf.int64), tf.constant(-1, tf.int64)),
      lambda state, item: (
        state[0] + 1,
        tf.where((state[1] < 0) & item[1], item[0], state[1]),
      ),
    )
  )
  if first_bad >= 0:
    raise InputError(
      "--%s: %s: record %d has a value outside %s; records "
      "made with other labels?"
      % (
        flag_name,
        path,
        int(first_bad) + 1,
        ", ".join("%s in [0, %d)" % item for item in limits),
      )
    )
  return int(count)


def first_record(input_files):
  """{feature: list of values} of the first record of `input_files`
  (e.g. to read the layout of multiple-choice input_ids)."""
  try:
    records = list(tf.data.TFRecordDataset(list(input_files)).take(1))
  except tf.errors.DataLossError as e:
    raise InputError(damaged_input(input_files, e)) from None
  if not records:
    raise InputError("%s: no records" % ", ".join(input_files))
  try:
    example = tf.train.Example.FromString(records[0].numpy())
  except Exception as e:  # pylint: disable=broad-except
    raise InputError(
      "%s: not a tf.train.Example (%s)" % (input_files[0], first_line(str(e)))
    ) from None
  return {
    name: list(feature.int64_list.value or feature.float_list.value)
    for name, feature in example.features.feature.items()
  }


def check_first_record(path, name_to_features, flag, hint):
  """InputError unless the first record of `path` has every fixed-length
  feature of `name_to_features` with its number of values: records
  written for other length flags fail here, naming `--flag`, the feature
  and `hint`, not inside the first training batch."""
  record = first_record([path])
  for name, spec in name_to_features.items():
    if name not in record:
      raise InputError(
        "--%s %s: record 0 has no %s feature" % (flag, path, name)
      )
    length = math.prod(spec.shape)
    if len(record[name]) != length:
      raise InputError(
        "--%s %s: record 0 has %d values of %s, the flags expect %d (%s)"
        % (flag, path, len(record[name]), name, length, hint)
      )


def train_records(patterns, name_to_features, value_limits=None):
  """--train_records (comma-separated globs) -> (files, number of records),
  checked as `record_files` and `count_records` do."""
  files = record_files(patterns, "train_records")
  return files, count_records(
    files, name_to_features, "train_records", value_limits
  )


def damaged_input(input_files, error):
  """The one-line message for a DataLossError met while reading
  `input_files`: which file is corrupt or truncated (read again to find it;
  TF's message does not say)."""
  for path in input_files:
    try:
      for _ in tf.data.TFRecordDataset(path).batch(1024):
        pass
    except tf.errors.DataLossError as e:
      return "%s: damaged TFRecord file (%s)" % (path, first_line(e.message))
  return "damaged input (%s)" % first_line(error.message)


def eval_dataset(
  input_files,
  name_to_features,
  global_batch_size,
  repeat=False,
  drop_remainder=False,
  max_batches=None,
):
  """Sequential global batches for `Trainer.evaluate` / `Trainer.predict`.

  `repeat=True, drop_remainder=True, max_batches=max_eval_steps` is the
  original pre-training eval; the defaults are one full pass.
  """
  records = tf.data.TFRecordDataset(list(input_files))
  if repeat:
    records = records.repeat()
  dataset = _parse_and_batch(
    records, name_to_features, global_batch_size, drop_remainder
  )
  if max_batches is not None:
    dataset = dataset.take(max_batches)
  dataset.input_files = list(input_files)  # for `damaged_input`
  return dataset
