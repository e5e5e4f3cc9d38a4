"""The original `tokenization.py` API, unchanged (public facade).

The implementation lives in `bert_tf.tokenizers.tokenization`; this module
keeps the original import path (`from bert_tf import tokenization`) with
every name the original module had, helper functions included.
"""

# pylint: disable=unused-import
from bert_tf.tokenizers.tokenization import _is_control
from bert_tf.tokenizers.tokenization import _is_punctuation
from bert_tf.tokenizers.tokenization import _is_whitespace
from bert_tf.tokenizers.tokenization import BasicTokenizer
from bert_tf.tokenizers.tokenization import convert_by_vocab
from bert_tf.tokenizers.tokenization import convert_ids_to_tokens
from bert_tf.tokenizers.tokenization import convert_to_unicode
from bert_tf.tokenizers.tokenization import convert_tokens_to_ids
from bert_tf.tokenizers.tokenization import FullTokenizer
from bert_tf.tokenizers.tokenization import load_vocab
from bert_tf.tokenizers.tokenization import printable_text
from bert_tf.tokenizers.tokenization import validate_case_matches_checkpoint
from bert_tf.tokenizers.tokenization import whitespace_tokenize
from bert_tf.tokenizers.tokenization import WordpieceTokenizer
