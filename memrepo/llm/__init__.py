"""Language-model access for every role: an OpenAI-compatible backend and an offline one.

    >>> backend = get_backend(repo.settings, stats_path=repo.store.state_dir / STATS_FILE)
    >>> backend.run("router", {"text": "..."}, ROUTER_SCHEMA, offline=route_offline)

Prompts are files (``templates/prompts/<role>.md``, see :mod:`memrepo.llm.prompts`);
replies are validated against the role's schema (:mod:`memrepo.llm.schema`);
usage per role accumulates in ``<state_dir>/llm-stats.json`` (:mod:`memrepo.llm.stats`).
"""

from memrepo.llm.backend import Backend, OfflineBackend, OpenAIBackend, get_backend
from memrepo.llm.stats import STATS_FILE, RoleStats, read_stats

__all__ = ["Backend", "OfflineBackend", "OpenAIBackend", "get_backend", "STATS_FILE", "RoleStats", "read_stats"]
