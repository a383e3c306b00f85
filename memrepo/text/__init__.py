"""Plain English text: the one home of month and weekday names and date parsing
(:mod:`~memrepo.text.dates`) and stop words (:mod:`~memrepo.text.stopwords`), shared by the
writers, the extractor, recall and the full-text index. Sentence splitting is a stage of the
language layer (:func:`memrepo.nlp.tokens.split_sentences`).

A layer beside ``memrepo/nlp``: it imports nothing of memrepo above it, so every layer above may use it.
"""
