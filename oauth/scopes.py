"""Scopes (SPEC 2.5): `profile` (default), `api` (the admin API), `offline_access` (no effect)."""

from __future__ import annotations

SUPPORTED_SCOPES = ("profile", "api", "offline_access")
DEFAULT_SCOPE = "profile"


def parse_scope(scope: str | None) -> list[str] | None:
    """The requested scopes in order without duplicates; None when one is unknown."""
    names: list[str] = []
    for name in (scope or "").split():
        if name not in SUPPORTED_SCOPES:
            return None
        if name not in names:
            names.append(name)
    return names


def normalize_scope(scope: str | None) -> str | None:
    """The scope string to grant: the requested one, or the default when none was asked."""
    names = parse_scope(scope)
    if names is None:
        return None
    return " ".join(names) if names else DEFAULT_SCOPE


def is_subset(requested: str, granted: str) -> bool:
    return set(requested.split()) <= set(granted.split())
