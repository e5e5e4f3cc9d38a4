"""Learning a WordPiece vocabulary (or a SentencePiece model) from raw text.

`words` counts the words of the corpus as the original BasicTokenizer splits
them (TensorFlow-free; the Beam driver runs it per input shard),
`wordpiece` turns the counts into a vocabulary with tensorflow-text's learner
and the original's reserved tokens, `sentencepiece` trains an ALBERT-style
model. `python -m data_prep.learn_vocab` is the command.
"""
