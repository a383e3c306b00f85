"""Semantic AutoDream (MIRIX-2.0 §2.5, A.5): duplicate-anchor merges proposed as reviewable commits.

A run reads the semantic frontier (graph files of semantic records written since
the last run), forms candidate pairs by anchor-name embedding, asks the
``judge`` role about each pair under an explicit cap, and writes one decision
file (``owl:sameAs`` for confirmed merges, explicit rejections, the frontier it
covered) on a new ``dream/...`` branch. Nothing else is ever written: no record
and no frame file changes, so a merge is a small diff that ``git revert`` undoes.

Modules: :mod:`.constants` (types, thresholds, caps), :mod:`.algebra` (the merge
algebra), :mod:`.judge` (the judge role and its offline rule), :mod:`.decisions`
(decision files: writing and reading, the negative cache key),
:mod:`.names` (the anchor-name index), :mod:`.run` (the rounds) and
:mod:`.review` (list, show, approve, reject).

Procedural AutoDream (skills from task sessions): :mod:`.distill` (the distiller and its
quote check), :mod:`.curate` (the curator, skill files, the keys of rejected edits) and
:mod:`.skills` (the run on a ``dream/skills-...`` branch, reject files, export).
"""
