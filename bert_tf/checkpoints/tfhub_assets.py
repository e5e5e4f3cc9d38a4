"""The tokenizer file a TF Hub encoder SavedModel carries as an asset.

Model Garden's encoders name it on their root: `vocab_file` (WordPiece) or
`sp_model_file` (SentencePiece: ALBERT-style, multilingual). Both are read
through the `Artefact`, so the name the SavedModel gives cannot lead out of
its folder; a SentencePiece model is parsed (not run) on the way.

Example:
    vocab = tokenizer_asset(Artefact(folder, "--input"), meta_graph)
    if isinstance(vocab, SentencePieceFile):
      print(vocab.pieces, "pieces; a converted folder holds", vocab.file_name)
"""

import sentencepiece as spm

from bert_tf import io_utils

_NAMES = ("vocab_file", "sp_model_file")
# Largest SentencePiece model read (a 250k-piece multilingual one is ~5 MB).
_SPM_LIMIT = 64 << 20


class SentencePieceFile(str):
  """The real path of an encoder's SentencePiece model asset (not a
  vocab.txt), with its number of `pieces` and its name as the user knows
  it (`shown`); a converted folder names it `file_name`."""

  file_name = "spiece.model"


def tokenizer_asset(model, meta):
  """The real path of the root's `vocab_file` asset, a `SentencePieceFile`
  for an `sp_model_file` one, or None (no asset, or its file is absent).

  Args:
    model: the `Artefact` of the SavedModel folder.
    meta: its MetaGraphDef.
  """
  nodes = meta.object_graph_def.nodes
  root = {c.local_name: c.node_id for c in nodes[0].children}
  for name in _NAMES:
    if name not in root or nodes[root[name]].WhichOneof("kind") != "asset":
      continue
    index = nodes[root[name]].asset.asset_file_def_index
    if not 0 <= index < len(meta.asset_file_def):
      raise model.error(("saved_model.pb",), "names no %s asset" % name)
    # The asset's name is the artefact's word: it stays in the folder.
    parts = ("assets", meta.asset_file_def[index].filename)
    path = model.file(*parts, required=False)
    if not path or name == "vocab_file":
      return path
    processor = spm.SentencePieceProcessor()
    try:
      processor.LoadFromSerializedProto(
        model.read_bytes(*parts, limit=_SPM_LIMIT)
      )
    except RuntimeError as e:  # "could not parse ModelProto"
      raise model.error(
        parts, "not a SentencePiece model (%s)" % io_utils.first_line(e)
      ) from e
    path = SentencePieceFile(path)
    path.pieces, path.shown = processor.GetPieceSize(), model.shown(*parts)
    return path
  return None
