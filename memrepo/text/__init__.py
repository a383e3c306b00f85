"""Plain English text: the one home of month and weekday names and date parsing
(:mod:`~memrepo.text.dates`), sentence splitting (:mod:`~memrepo.text.sentences`) and stop
words (:mod:`~memrepo.text.stopwords`), shared by the writers, the extractor, recall and
the full-text index.

A bottom layer next to ``records``: it imports nothing of memrepo, so every layer may use it.
"""
