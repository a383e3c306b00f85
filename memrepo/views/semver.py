"""npm's semver ranges, small and offline: does version ``1.4.2`` satisfy ``^1.2 || ~0.9.1``?

What package.json ranges use, as node-semver reads them: comparators (``<``, ``<=``,
``>``, ``>=``, ``=``, bare), x-ranges (``1.x``, ``1.2.*``, ``*``, partial versions
``1`` and ``1.2``), tilde (``~1.2.3``: same minor), caret (``^1.2.3``: same left-most
non-zero part), hyphen ranges (``1.2 - 2.3``) and ``||``. A pre-release version
(``2.0.0-rc.1``) satisfies a set only if one of its comparators names a pre-release
of the same ``major.minor.patch``, as in npm. No package for this is installed with
memrepo; this module is what profiles need, tested in tests/test_views_versions.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memrepo.errors import RecordError

_VERSION = re.compile(r"^\s*[v=]?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\s*$")
_PARTIAL = re.compile(r"^[v=]?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


@dataclass(frozen=True, order=False)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def key(self) -> tuple:
        # A release sorts after every pre-release of it; numeric identifiers before alphanumeric ones.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 1 if not self.pre else 0, pre)

    @property
    def release(self) -> tuple[int, int, int]:
        return self.major, self.minor, self.patch

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}" + (f"-{'.'.join(self.pre)}" if self.pre else "")


def parse_version(text: str) -> Version | None:
    """``1.2.3``, ``v1.2.3-rc.1``; a documented ``1.2`` is read as ``1.2.0``. None if not a version."""
    m = _VERSION.match(text)
    if not m:
        return None
    return Version(int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0),
                   tuple(m.group(4).split(".")) if m.group(4) else ())


_OPS = {"<": lambda c: c < 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
        "=": lambda c: c == 0}


def _cmp(a: Version, b: Version) -> int:
    ka, kb = a.key(), b.key()
    return (ka > kb) - (ka < kb)


Comparator = tuple[str, Version]
_ZERO_PRE = ("0",)


def _partial(text: str, where: str) -> tuple[list[int | None], tuple[str, ...]]:
    m = _PARTIAL.match(text)
    if not m:
        raise RecordError(f"{where}: {text!r} is not a version or a version range")
    parts: list[int | None] = []
    for group in m.groups()[:3]:
        if group is None or group in ("x", "X", "*"):
            break
        parts.append(int(group))
    while len(parts) < 3:
        parts.append(None)
    return parts, tuple(m.group(4).split(".")) if m.group(4) and parts[2] is not None else ()


def _v(parts: list[int | None], pre: tuple[str, ...] = ()) -> Version:
    return Version(parts[0] or 0, parts[1] or 0, parts[2] or 0, pre)


def _upper_of(parts: list[int | None]) -> Version | None:
    """The first version past a partial version (``1`` -> ``2.0.0-0``, ``1.2`` -> ``1.3.0-0``)."""
    major, minor = parts[0], parts[1]
    if major is None:
        return None
    if minor is None:
        return Version(major + 1, 0, 0, _ZERO_PRE)
    return Version(major, minor + 1, 0, _ZERO_PRE)


def _comparators(token: str, where: str) -> list[Comparator]:
    m = re.match(r"^(<=|>=|<|>|=|~>|~|\^)?\s*(.*)$", token)
    assert m is not None
    op, rest = m.group(1) or "", m.group(2)
    if rest in ("", "*", "x", "X") and op in ("", "=", ">=", "~", "^"):
        return [(">=", Version(0, 0, 0))]
    parts, pre = _partial(rest, where)
    complete = parts[2] is not None
    if op in ("", "="):
        if complete:
            return [("=", _v(parts, pre))]
        upper = _upper_of(parts)
        return [(">=", _v(parts))] + ([("<", upper)] if upper else [])
    if op in ("~", "~>"):
        upper = Version(parts[0] or 0, (parts[1] or 0) + 1, 0, _ZERO_PRE) if parts[1] is not None \
            else Version((parts[0] or 0) + 1, 0, 0, _ZERO_PRE)
        return [(">=", _v(parts, pre)), ("<", upper)]
    if op == "^":
        major, minor, patch = parts
        if major is None:
            return [(">=", Version(0, 0, 0))]
        if major > 0 or minor is None:
            upper = Version(major + 1, 0, 0, _ZERO_PRE)
        elif minor > 0 or patch is None:
            upper = Version(0, minor + 1, 0, _ZERO_PRE)
        else:
            upper = Version(0, 0, patch + 1, _ZERO_PRE)
        return [(">=", _v(parts, pre)), ("<", upper)]
    if complete:
        return [(op, _v(parts, pre))]
    # A partial version after a comparator: >1 is >=2.0.0, <=1.2 is <1.3.0-0, <1.2 is <1.2.0-0.
    upper = _upper_of(parts)
    if op == ">":
        return [(">=", upper)] if upper else [("<", Version(0, 0, 0, _ZERO_PRE))]
    if op == "<=":
        return [("<", upper)] if upper else [(">=", Version(0, 0, 0))]
    if op == "<":
        return [("<", _v(parts, _ZERO_PRE))] if parts[0] is not None else [("<", Version(0, 0, 0, _ZERO_PRE))]
    return [(">=", _v(parts))]  # >=


def parse_range(text: str, where: str = "range") -> list[list[Comparator]]:
    """The sets of comparators of ``text`` (any one set satisfied is enough).

    Raises:
        RecordError: ``text`` is not a semver range (``where`` names the file and dependency).
    """
    sets: list[list[Comparator]] = []
    for alternative in text.split("||"):
        alternative = alternative.strip()
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", alternative)
        if hyphen:
            low, _ = _partial(hyphen.group(1), where)
            high, high_pre = _partial(hyphen.group(2), where)
            lower = _v(low, _partial(hyphen.group(1), where)[1])
            if high[2] is not None:
                sets.append([(">=", lower), ("<=", _v(high, high_pre))])
            else:
                upper = _upper_of(high)
                sets.append([(">=", lower)] + ([("<", upper)] if upper else []))
            continue
        # "> 1.2" and ">=1.2 <2": an operator may stand apart from its version.
        token = r"(?:<=|>=|<|>|=|~>|~|\^)?\s*[^\s<>=~^]+"
        if not re.fullmatch(rf"(?:{token}\s*)*", alternative):
            raise RecordError(f"{where}: {alternative!r} is not a version or a version range")
        tokens = re.findall(token, alternative)
        comparators: list[Comparator] = []
        for token in tokens or [""]:
            comparators.extend(_comparators(token.strip(), where))
        sets.append(comparators)
    return sets


def satisfies(version: str | Version, range_text: str, where: str = "range") -> bool:
    """``version`` is inside ``range_text`` (npm's rules, pre-releases included only where named)."""
    v = parse_version(version) if isinstance(version, str) else version
    if v is None:
        return False
    for comparators in parse_range(range_text, where):
        if not all(_OPS[op](_cmp(v, bound)) for op, bound in comparators):
            continue
        if v.pre and not any(b.pre and b.release == v.release and b.pre != _ZERO_PRE for _, b in comparators):
            continue
        return True
    return False


def newest(versions: list[str], range_text: str, where: str = "range") -> str | None:
    """The newest of ``versions`` inside ``range_text``, or None."""
    inside = [(parse_version(v), v) for v in versions if satisfies(v, range_text, where)]
    return max(inside, key=lambda item: item[0].key())[1] if inside else None  # type: ignore[union-attr]
