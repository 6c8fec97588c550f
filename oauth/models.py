"""Users, clients, pending authorization requests, codes and tokens.

Codes, tokens and client secrets are stored only as SHA-256 hashes (STYLE rule 5); the
models follow Authlib's ClientMixin / AuthorizationCodeMixin / TokenMixin protocols so the
Authlib grants can use them, but they are our own tables.
"""

from __future__ import annotations

import re

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, TokenMixin
from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from utils import new_id, now_ms, secret_matches

# Only the loopback IP literals match on any port (SPEC 8.5); `localhost` matches exactly.
_LOOPBACK_RE = re.compile(r"^(?P<origin>http://(?:127\.0\.0\.1|\[::1\]))(?::\d{1,5})?(?P<rest>[/?].*)?$")


class User(db.Model):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255), default="")
    first_name: Mapped[str] = mapped_column(String(64), default="")
    last_name: Mapped[str] = mapped_column(String(64), default="")
    nickname: Mapped[str] = mapped_column(String(64), default="")
    roles: Mapped[str] = mapped_column(String(255), default="system_user")
    auth_service: Mapped[str] = mapped_column(String(32), default="")
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    update_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    delete_at: Mapped[int] = mapped_column(BigInteger, default=0)
    last_login_at: Mapped[int] = mapped_column(BigInteger, default=0)

    @property
    def is_active(self) -> bool:
        return self.delete_at == 0

    @property
    def role_names(self) -> list[str]:
        return self.roles.split()

    def get_user_id(self) -> str:  # Authlib protocol
        return self.id


class Client(db.Model, ClientMixin):
    __tablename__ = "oauth_clients"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    client_id: Mapped[str] = mapped_column(String(26), unique=True, default=new_id)
    name: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(String(512), default="")
    homepage: Mapped[str] = mapped_column(String(1024), default="")
    icon_url: Mapped[str] = mapped_column(String(1024), default="")
    client_secret_hash: Mapped[str] = mapped_column(String(64), default="")
    redirect_uris: Mapped[list] = mapped_column(JSON, default=list)
    grant_types: Mapped[list] = mapped_column(JSON, default=list)
    confidential: Mapped[bool] = mapped_column(Boolean, default=True)
    trusted: Mapped[bool] = mapped_column(Boolean, default=False)
    creator_id: Mapped[str] = mapped_column(String(26), default="")
    service_user_id: Mapped[str | None] = mapped_column(
        String(26), ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    update_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)

    # --- Authlib ClientMixin protocol -------------------------------------------------
    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str) -> str:
        from oauth.scopes import normalize_scope

        return normalize_scope(scope)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri_registered(self.redirect_uris, redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        return bool(self.client_secret_hash) and secret_matches(
            client_secret, self.client_secret_hash
        )

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.confidential:
            return method in ("client_secret_basic", "client_secret_post")
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


def redirect_uri_registered(registered: list[str], candidate: str) -> bool:
    """Exact string match; loopback IP literals over http match on any port (RFC 8252 §7.3)."""
    if candidate in registered:
        return True
    stripped = _strip_loopback_port(candidate)
    if stripped is None:
        return False
    return any(_strip_loopback_port(uri) == stripped for uri in registered)


def _strip_loopback_port(uri: str) -> str | None:
    match = _LOOPBACK_RE.match(uri)
    if not match:
        return None
    return match.group("origin") + (match.group("rest") or "")


class AuthorizationRequest(db.Model):
    """A validated authorize request waiting for login and consent (SPEC 2.3 step 4)."""

    __tablename__ = "oauth_authorization_requests"

    id: Mapped[str] = mapped_column(String(43), primary_key=True)
    client_pk: Mapped[str] = mapped_column(
        String(26), ForeignKey("oauth_clients.id", ondelete="CASCADE"), index=True
    )
    redirect_uri: Mapped[str] = mapped_column(Text)
    redirect_uri_given: Mapped[bool] = mapped_column(Boolean, default=False)
    scope: Mapped[str] = mapped_column(String(255), default="")
    state: Mapped[str] = mapped_column(Text, default="")
    code_challenge: Mapped[str] = mapped_column(String(128), default="")
    code_challenge_method: Mapped[str] = mapped_column(String(10), default="")
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)
    used_at: Mapped[int] = mapped_column(BigInteger, default=0)

    client: Mapped[Client] = relationship(lazy="joined")


class AuthorizationCode(db.Model, AuthorizationCodeMixin):
    __tablename__ = "oauth_codes"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_pk: Mapped[str] = mapped_column(
        String(26), ForeignKey("oauth_clients.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(
        String(26), ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    redirect_uri: Mapped[str] = mapped_column(Text, default="")
    redirect_uri_given: Mapped[bool] = mapped_column(Boolean, default=False)
    scope: Mapped[str] = mapped_column(String(255), default="")
    code_challenge: Mapped[str] = mapped_column(String(128), default="")
    code_challenge_method: Mapped[str] = mapped_column(String(10), default="")
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)
    used_at: Mapped[int] = mapped_column(BigInteger, default=0)

    client: Mapped[Client] = relationship(lazy="joined")

    # --- Authlib AuthorizationCodeMixin protocol ----------------------------------------
    def get_redirect_uri(self) -> str:
        return self.redirect_uri if self.redirect_uri_given else ""

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self):  # pragma: no cover - no OpenID Connect
        return None

    def get_auth_time(self):  # pragma: no cover - no OpenID Connect
        return None

    def is_expired(self) -> bool:
        return now_ms() >= self.expires_at


class Token(db.Model, TokenMixin):
    """An access token and (optionally) its refresh token, stored as hashes.

    `family_id` ties together every token descended from one grant, so reuse of a retired
    refresh token can revoke the whole family (RFC 9700 §4.14); `code_id` ties a family to the
    authorization code that started it, so a replayed code can revoke it (RFC 6749 §4.1.2).
    """

    __tablename__ = "oauth_tokens"
    __table_args__ = (Index("ix_oauth_tokens_family", "family_id"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    client_pk: Mapped[str] = mapped_column(
        String(26), ForeignKey("oauth_clients.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(
        String(26), ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    access_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    # `scope` is what the access token may do; `granted_scope` is what the user granted the
    # family, the ceiling for narrowing on refresh (the refresh token keeps it).
    scope: Mapped[str] = mapped_column(String(255), default="")
    granted_scope: Mapped[str] = mapped_column(String(255), default="")
    grant_type: Mapped[str] = mapped_column(String(40), default="authorization_code")
    family_id: Mapped[str] = mapped_column(String(26))
    code_id: Mapped[str | None] = mapped_column(String(26), nullable=True, index=True)
    issued_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    access_expires_at: Mapped[int] = mapped_column(BigInteger, index=True)
    refresh_expires_at: Mapped[int] = mapped_column(BigInteger, default=0)
    refresh_used_at: Mapped[int] = mapped_column(BigInteger, default=0)
    revoked_at: Mapped[int] = mapped_column(BigInteger, default=0)

    client: Mapped[Client] = relationship(lazy="joined")
    user: Mapped[User] = relationship(lazy="joined")

    # --- Authlib TokenMixin protocol ------------------------------------------------------
    def check_client(self, client: Client) -> bool:
        return self.client_pk == client.id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return max(0, (self.access_expires_at - self.issued_at) // 1000)

    def is_expired(self) -> bool:
        return now_ms() >= self.access_expires_at

    def is_revoked(self) -> bool:
        return self.revoked_at != 0

    def refresh_is_usable(self) -> bool:
        return (
            self.refresh_token_hash is not None
            and self.revoked_at == 0
            and self.refresh_used_at == 0
            and now_ms() < self.refresh_expires_at
        )


class PersonalAccessToken(db.Model):
    """A token for curl scripting (`flask tokens create`); it carries the `api` scope."""

    __tablename__ = "personal_access_tokens"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(
        String(26), ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str] = mapped_column(String(255), default="")
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    revoked_at: Mapped[int] = mapped_column(BigInteger, default=0)

    user: Mapped[User] = relationship(lazy="joined")


class AuthFailure(db.Model):
    """One failed login or client authentication, counted per key (SPEC 2.7).

    Keys are `ip:<address>` and `user:<username>`. Counting rows in the window (instead of a
    counter in a process) means every worker and host sees the same count.
    """

    __tablename__ = "auth_failures"
    __table_args__ = (Index("ix_auth_failures_key_at", "key", "at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(db.Integer, "sqlite"), primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(300))
    at: Mapped[int] = mapped_column(BigInteger, index=True)
