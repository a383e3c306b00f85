"""Memorix views over a memory repository: locators, Derivations, Environments, Quests and Profiles (DESIGN.md §4).

Everything here takes a :class:`memrepo.store.git.GitStore` (and plain values), never the porcelain.
"""
