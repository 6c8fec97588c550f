"""Who is calling /api/v4 and what it may do (SPEC 1.3).

The blueprint authenticates every request in `before_request`; a view says which permission
it needs with `@requires(...)`, which runs before the view reads its body. Views that do not
take a user's Bearer token (the health ping, server-to-server routes) say so with
`@public` or their own authentication.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps

from flask import current_app, g, request

from admin_api.permissions import permissions_for
from errors import PermissionDenied, Unauthorized
from oauth.models import User
from oauth.services import resolve_bearer

# Views reachable with a token that lacks the `api` scope (SPEC 2.5).
_ANY_SCOPE_ATTR = "_authflow_any_scope"
_PUBLIC_ATTR = "_authflow_public"


@dataclass(frozen=True)
class Caller:
    user: User
    scopes: frozenset[str]
    permissions: frozenset[str]

    def can(self, permission: str) -> bool:
        return permission in self.permissions


def public(view):
    """Mark a view as needing no Bearer token (it authenticates otherwise, or not at all)."""
    setattr(view, _PUBLIC_ATTR, True)
    return view


def is_public(view) -> bool:
    return getattr(view, _PUBLIC_ATTR, False)


def any_scope(view):
    """Mark a view as open to tokens without the `api` scope (e.g. users/me)."""
    setattr(view, _ANY_SCOPE_ATTR, True)
    return view


def _bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def authenticate_request() -> None:
    """before_request of the /api/v4 blueprint: sets g.caller or raises 401/403."""
    view = current_app.view_functions.get(request.endpoint or "")
    if view is None or is_public(view):
        return
    raw = _bearer_token()
    if raw is None:
        raise Unauthorized(token_presented=bool(request.headers.get("Authorization")))
    identity = resolve_bearer(raw)
    if identity is None:
        raise Unauthorized(token_presented=True)
    g.caller = Caller(identity.user, identity.scopes, permissions_for(identity.user.role_names))
    if "api" not in identity.scopes and not getattr(view, _ANY_SCOPE_ATTR, False):
        raise PermissionDenied("This token does not carry the api scope.")


def current_caller() -> Caller:
    return g.caller


def requires(*permissions: str):
    """The caller must hold every one of `permissions` (checked before the body is read)."""

    def decorator(view):
        @wraps(view)
        def wrapped(*args, **kwargs):
            caller = current_caller()
            missing = [p for p in permissions if not caller.can(p)]
            if missing:
                raise PermissionDenied(
                    f"You do not have the appropriate permissions ({', '.join(missing)})."
                )
            return view(*args, **kwargs)

        return wrapped

    return decorator


def require_any(*permissions: str) -> None:
    """Inside a view: the caller must hold at least one of `permissions`."""
    caller = current_caller()
    if not any(caller.can(p) for p in permissions):
        raise PermissionDenied(f"You do not have the appropriate permissions ({' or '.join(permissions)}).")
