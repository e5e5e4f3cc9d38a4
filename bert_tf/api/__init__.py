"""The Python API: task models over raw text, in the Keras way.

    clf = bert_tf.TextClassifier.from_pretrained(path_or_name, num_labels=2)
    clf.fit(texts_or_pairs, labels, epochs=3)
    clf.predict(["a text"])

`TextClassifier`, `SpanExtractor` (SQuAD), `TokenTagger` (NER) and
`MultipleChoice` each wrap an exporter of `bert_tf/export/` (model,
in-graph tokenizer, serving function) and the training scripts' Task;
`base.TaskApi` holds what they share. The API sits above `bert_tf/cli/`
(it reuses the scripts' step count and `fetch_model`), never imports
data_prep, and so does SQuAD's and NER's windows in the graph, as the
exporters do.
"""
