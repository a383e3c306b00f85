"""Errors raised by the library. The CLI turns any MemrepoError into a message and exit status 1."""


class MemrepoError(Exception):
    """Base class of every error memrepo explains to its user."""


class RecordError(MemrepoError):
    """A record (or its input) is invalid; the message names the file or the field at fault."""


class RepositoryError(MemrepoError):
    """The memory repository is missing, not a memory repository, or in a state memrepo cannot use."""


class NotFoundError(MemrepoError):
    """A record, source or revision does not exist."""


class VaultKeyError(MemrepoError):
    """A vault operation needs the key and it was not supplied (or is wrong)."""


class ModelError(MemrepoError):
    """A model call failed or never produced a valid reply; the message names the role and the problem."""
