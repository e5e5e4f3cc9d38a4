"""The Python API: task models over raw text, in the Keras way.

    clf = bert_tf.TextClassifier.from_pretrained(path_or_name, num_labels=2)
    clf.fit(texts_or_pairs, labels, epochs=3)
    clf.predict(["a text"])

`TextClassifier`, `SpanExtractor` (SQuAD), `TokenTagger` (NER) and
`MultipleChoice` each wrap an exporter of `bert_tf/export/` (model,
in-graph tokenizer, serving function: `predict`) and the training scripts'
Task; `fit` and `evaluate` run the scripts' own data path over in-memory
examples (data_prep's readers, featurizers and windows; their results and
metrics code), so `evaluate` returns what the script's eval_results file
holds for the same examples and weights. `base.TaskApi` holds what they
share.
"""
