"""The original BERT scripts' model and tokenizer flags, defined once.

run_classifier.py, run_squad.py, extract_features.py and the data_prep CLIs
take the same --bert_config_file / --init_checkpoint / --vocab_file /
--do_lower_case / --max_seq_length, with the original help texts. Only absl
is imported (the data CLIs stay TensorFlow-free).

Example:
    bert_flags.define_tokenizer_flags()
    bert_flags.define_max_seq_length(384)
"""

from absl import flags

from bert_tf.runtime import flag_checks


def define_model_flags():
  """--bert_config_file and --init_checkpoint."""
  flags.DEFINE_string(
    "bert_config_file",
    None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.",
  )
  flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Initial checkpoint (usually from a pre-trained BERT model).",
  )


def define_output_dir():
  """--output_dir of the three training scripts."""
  flags.DEFINE_string(
    "output_dir",
    None,
    "The output directory where the model checkpoints will be written.",
  )


def define_tokenizer_flags():
  """--vocab_file and --do_lower_case."""
  flags.DEFINE_string(
    "vocab_file",
    None,
    "The vocabulary file that the BERT model was trained on.",
  )
  flags.DEFINE_bool(
    "do_lower_case",
    True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.",
  )


def define_spm_model_file():
  """--spm_model_file: a SentencePiece model replacing --vocab_file."""
  flags.DEFINE_string(
    "spm_model_file",
    None,
    "Optional SentencePiece model (ALBERT style); replaces --vocab_file. "
    "Its vocabulary must hold [CLS] and [SEP].",
  )


def define_max_seq_length(default):
  """--max_seq_length (128 for classification and features, 384 SQuAD)."""
  flags.DEFINE_integer(
    "max_seq_length",
    default,
    "The maximum total input sequence length after WordPiece "
    "tokenization. Sequences longer than this will be truncated, and "
    "sequences shorter than this will be padded.",
  )
  flag_checks.at_least("max_seq_length", 3)
