"""The rules of the OAuth provider as plain functions: users, clients, authorize, consent,
codes and tokens. No flask.request here; errors are raised as typed exceptions.

Every "exactly once" rule is a conditional UPDATE whose row count decides the winner, so it
holds across workers and hosts sharing one database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError

from errors import Conflict, InvalidInput, NotFound, PageError
from extensions import db
from oauth.models import (
    AuthFailure,
    AuthorizationCode,
    AuthorizationRequest,
    Client,
    PersonalAccessToken,
    Token,
    User,
    redirect_uri_registered,
)
from oauth.passwords import hash_password, needs_rehash, verify_password
from oauth.scopes import normalize_scope
from oauth.throttle import THROTTLE_RETENTION_MS
from utils import hash_secret, new_id, new_secret, now_ms

USERNAME_RE = re.compile(r"^[a-z0-9._-]{3,64}$")
EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
CODE_CHALLENGE_RE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
PAT_PREFIX = "afp_"
MIN_PASSWORD_LENGTH = 8
DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"]
KNOWN_GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")
UNKNOWN_CLIENT_MESSAGE = (
    "Your client is not authorized to connect. "
    "Please inform the administrator of your client."
)


# --- users ------------------------------------------------------------------------------


def create_user(
    username: str,
    email: str,
    password: str,
    *,
    roles: str = "system_user",
    first_name: str = "",
    last_name: str = "",
    nickname: str = "",
    auth_service: str = "",
    is_bot: bool = False,
) -> User:
    """Create a user. Raises InvalidInput (bad field) or Conflict (username/email taken)."""
    username = (username or "").strip().lower()
    email = (email or "").strip().lower()
    if not USERNAME_RE.match(username):
        raise InvalidInput("username must be 3-64 characters of a-z, 0-9, '.', '_' or '-'.")
    if not EMAIL_RE.match(email) or len(email) > 254:
        raise InvalidInput("email is not a valid address.")
    if auth_service not in ("", "ldap"):
        raise InvalidInput("auth_service must be '' or 'ldap'.")
    if auth_service == "" and len(password or "") < MIN_PASSWORD_LENGTH:
        raise InvalidInput(f"password must be at least {MIN_PASSWORD_LENGTH} characters.")
    user = User(
        username=username,
        email=email,
        password_hash=hash_password(password) if password else "",
        roles=roles,
        first_name=first_name,
        last_name=last_name,
        nickname=nickname,
        auth_service=auth_service,
        is_bot=is_bot,
    )
    db.session.add(user)
    _flush_unique(f"A user with username {username!r} or email {email!r} already exists.")
    return user


def _flush_unique(message: str) -> None:
    """Flush, turning a unique-key violation into Conflict (the key decides, not a pre-check)."""
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError as exc:
        raise Conflict(message) from exc


def find_user(login: str) -> User | None:
    """The user whose username or email is `login` (case-insensitive)."""
    login = (login or "").strip().lower()
    if not login or "\x00" in login:
        return None
    return db.session.scalar(select(User).where(or_(User.username == login, User.email == login)))


def get_user(user_id: str) -> User:
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFound("User not found.", error_id="app.user.missing_account.const")
    return user


def require_user(login: str) -> User:
    user = find_user(login)
    if user is None:
        raise NotFound(f"No user {login!r}.", error_id="app.user.missing_account.const")
    return user


def authenticate(login: str, password: str) -> User | None:
    """The active user with this username/email and password, else None (same time either way)."""
    user = find_user(login)
    ok = verify_password(user.password_hash if user else None, password or "")
    if not ok or user is None or not user.is_active or user.auth_service:
        return None
    if needs_rehash(user.password_hash):
        # The hash was made with older Argon2 parameters: upgrade it while we have the password.
        user.password_hash = hash_password(password)
    user.last_login_at = now_ms()
    return user


def set_password(user: User, password: str) -> None:
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise InvalidInput(f"password must be at least {MIN_PASSWORD_LENGTH} characters.")
    user.password_hash = hash_password(password)
    user.update_at = now_ms()


def deactivate_user(user: User) -> None:
    """Deactivate the user and revoke every token it holds."""
    now = now_ms()
    user.delete_at = user.delete_at or now
    user.update_at = now
    db.session.execute(
        update(Token).where(Token.user_id == user.id, Token.revoked_at == 0).values(revoked_at=now)
    )
    db.session.execute(
        update(PersonalAccessToken)
        .where(PersonalAccessToken.user_id == user.id, PersonalAccessToken.revoked_at == 0)
        .values(revoked_at=now)
    )


def list_users() -> list[User]:
    return list(db.session.scalars(select(User).order_by(User.username)))


# --- personal access tokens ---------------------------------------------------------------


def create_personal_token(user: User, description: str = "") -> tuple[PersonalAccessToken, str]:
    """A new personal access token; the raw value is returned once and only its hash kept."""
    if not user.is_active:
        raise InvalidInput("The user is deactivated.")
    raw = PAT_PREFIX + new_secret(32)
    row = PersonalAccessToken(user_id=user.id, token_hash=hash_secret(raw), description=description)
    db.session.add(row)
    db.session.flush()
    return row, raw


def revoke_personal_token(token_id: str) -> None:
    """Raises NotFound for an unknown id."""
    result = db.session.execute(
        update(PersonalAccessToken)
        .where(PersonalAccessToken.id == token_id, PersonalAccessToken.revoked_at == 0)
        .values(revoked_at=now_ms())
    )
    if result.rowcount == 0 and db.session.get(PersonalAccessToken, token_id) is None:
        raise NotFound("No such token.")


# --- clients ----------------------------------------------------------------------------


def validate_redirect_uris(uris: list[str], allow_http: bool) -> list[str]:
    """SPEC 2.1: 1-10 absolute URIs, https unless loopback/localhost or allowed, no fragment."""
    if not isinstance(uris, list) or not 1 <= len(uris) <= 10:
        raise InvalidInput("callback_urls: between 1 and 10 redirect URIs are required.")
    out: list[str] = []
    for uri in uris:
        if not isinstance(uri, str) or len(uri) > 1024:
            raise InvalidInput("callback_urls: each redirect URI must be a string.")
        try:
            parts = urlsplit(uri)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError as exc:
            raise InvalidInput(f"callback_urls: {uri!r} is not a valid URI.") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInput(f"callback_urls: {uri!r} must be an absolute http(s) URI.")
        if parts.fragment or "#" in uri:
            raise InvalidInput(f"callback_urls: {uri!r} must not contain a fragment.")
        loopback = parts.hostname in ("127.0.0.1", "::1", "localhost")
        if parts.scheme == "http" and not (loopback or allow_http):
            raise InvalidInput(f"callback_urls: {uri!r} must use https.")
        if uri not in out:
            out.append(uri)
    return out


def validate_grant_types(grant_types: list[str] | None, confidential: bool) -> list[str]:
    if not grant_types:
        return list(DEFAULT_GRANT_TYPES)
    bad = [g for g in grant_types if g not in KNOWN_GRANT_TYPES]
    if bad:
        raise InvalidInput(f"grant_types: unknown grant type {bad[0]!r}.")
    if "client_credentials" in grant_types and not confidential:
        raise InvalidInput("grant_types: client_credentials needs a confidential client.")
    return list(dict.fromkeys(grant_types))


def create_client(
    name: str,
    redirect_uris: list[str],
    *,
    confidential: bool = True,
    trusted: bool = False,
    grant_types: list[str] | None = None,
    description: str = "",
    homepage: str = "",
    icon_url: str = "",
    creator_id: str = "",
    allow_http: bool = False,
) -> tuple[Client, str | None]:
    """Register a client; returns it with its secret (None for a public client), shown once."""
    name = (name or "").strip()
    if not 1 <= len(name) <= 64:
        raise InvalidInput("name must be 1-64 characters.")
    client = Client(
        name=name,
        redirect_uris=validate_redirect_uris(redirect_uris, allow_http),
        grant_types=validate_grant_types(grant_types, confidential),
        confidential=confidential,
        trusted=trusted,
        description=description or "",
        homepage=homepage or "",
        icon_url=icon_url or "",
        creator_id=creator_id or "",
    )
    secret = None
    if confidential:
        secret = new_secret(48)  # 64 URL-safe characters (SPEC 2.1)
        client.client_secret_hash = hash_secret(secret)
    db.session.add(client)
    db.session.flush()
    if "client_credentials" in client.grant_types:
        service_user_for(client)
    return client, secret


def service_user_for(client: Client) -> User:
    """The user a client_credentials token acts as: one bot user per client, made with it."""
    if client.service_user_id:
        user = db.session.get(User, client.service_user_id)
        if user is not None:
            return user
    user = User(
        username=f"client.{client.client_id}",
        email=f"{client.client_id}@clients.invalid",
        password_hash="",
        roles="system_user",
        is_bot=True,
        nickname=client.name[:64],
    )
    db.session.add(user)
    db.session.flush()
    client.service_user_id = user.id
    return user


def get_client(client_id: str) -> Client:
    """Raises NotFound for an unknown client_id."""
    client = find_client(client_id)
    if client is None:
        raise NotFound("No such OAuth app.", error_id="app.oauth.get_app.find.app_error")
    return client


def find_client(client_id: str | None) -> Client | None:
    if not client_id or not isinstance(client_id, str) or len(client_id) > 64 or "\x00" in client_id:
        return None
    return db.session.scalar(select(Client).where(Client.client_id == client_id))


def list_clients(offset: int = 0, limit: int | None = None) -> list[Client]:
    query = select(Client).order_by(Client.create_at, Client.id).offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return list(db.session.scalars(query))


def delete_client(client: Client) -> None:
    """Delete the client with its codes, pending requests and tokens, in this transaction."""
    for model in (Token, AuthorizationCode, AuthorizationRequest):
        db.session.execute(delete(model).where(model.client_pk == client.id))
    if client.service_user_id:
        service_user = db.session.get(User, client.service_user_id)
        if service_user is not None:
            deactivate_user(service_user)
    db.session.delete(client)
    db.session.flush()


def update_client(
    client: Client,
    *,
    name: str,
    redirect_uris: list[str],
    trusted: bool,
    description: str = "",
    homepage: str = "",
    icon_url: str = "",
    grant_types: list[str] | None = None,
    allow_http: bool = False,
) -> Client:
    """Replace a client's editable fields with the same rules as creation (InvalidInput)."""
    name = (name or "").strip()
    if not 1 <= len(name) <= 64:
        raise InvalidInput("name must be 1-64 characters.")
    client.name = name
    client.redirect_uris = validate_redirect_uris(redirect_uris, allow_http)
    client.grant_types = validate_grant_types(grant_types or client.grant_types, client.confidential)
    client.trusted = trusted
    client.description = description or ""
    client.homepage = homepage or ""
    client.icon_url = icon_url or ""
    client.update_at = now_ms()
    if "client_credentials" in client.grant_types:
        service_user_for(client)
    db.session.flush()
    return client


def rotate_client_secret(client: Client) -> str:
    """A new secret for a confidential client; the old one stops working at once."""
    if not client.confidential:
        raise InvalidInput("A public client has no secret.")
    secret = new_secret(48)
    client.client_secret_hash = hash_secret(secret)
    client.update_at = now_ms()
    return secret


# --- authorize (SPEC 2.3) ---------------------------------------------------------------


class UnknownClientPage(PageError):
    """SPEC 2.3.1: an unknown client gets a 200 page, nothing redirected or stored."""

    status = 200
    error_id = "oauth.unknown_client"
    default_message = UNKNOWN_CLIENT_MESSAGE


@dataclass
class RedirectError(Exception):
    """An authorization error delivered to the client's redirect URI (SPEC 2.3.3)."""

    redirect_uri: str
    error: str
    description: str
    state: str | None = None


def append_query(uri: str, params: list[tuple[str, str]]) -> str:
    """Append parameters with `?` or `&` depending on whether the URI already has a query."""
    separator = "&" if urlsplit(uri).query else "?"
    if uri.endswith(("?", "&")):
        separator = ""
    return uri + separator + urlencode(params)


def error_redirect(err: RedirectError, issuer: str) -> str:
    params = [("error", err.error), ("error_description", err.description)]
    if err.state:
        params.append(("state", err.state))
    params.append(("iss", issuer))
    return append_query(err.redirect_uri, params)


def _single(args, name: str) -> str | None:
    values = args.getlist(name)
    return values[0] if values else None


def validate_authorize_request(args, *, require_pkce: str, ttl: int) -> AuthorizationRequest:
    """Check an authorize request in SPEC 2.3's order and store it for login and consent.

    Raises UnknownClientPage (200 page), PageError (400 page, never a redirect) or
    RedirectError (303 to the client).
    """
    client_ids = args.getlist("client_id")
    if len(client_ids) > 1:
        raise PageError("The client_id parameter was sent more than once.")
    client = find_client(client_ids[0] if client_ids else None)
    if client is None:
        raise UnknownClientPage()

    redirect_uris = args.getlist("redirect_uri")
    if len(redirect_uris) > 1:
        raise PageError("The redirect_uri parameter was sent more than once.")
    if redirect_uris:
        redirect_uri = redirect_uris[0]
        if not redirect_uri_registered(client.redirect_uris, redirect_uri):
            raise PageError("The redirect URI is not registered for this client.")
    elif len(client.redirect_uris) == 1:
        redirect_uri = client.redirect_uris[0]
    else:
        raise PageError("This client has several redirect URIs; the request must name one.")

    state = _single(args, "state")

    def fail(error: str, description: str) -> RedirectError:
        return RedirectError(redirect_uri, error, description, state)

    for name in ("response_type", "state", "scope", "code_challenge", "code_challenge_method"):
        if len(args.getlist(name)) > 1:
            raise fail("invalid_request", f"The {name} parameter was sent more than once.")
    response_type = _single(args, "response_type")
    if not response_type:
        raise fail("invalid_request", "The response_type parameter is missing.")
    if response_type != "code":
        raise fail("unsupported_response_type", "Only response_type=code is supported.")
    if not state:
        raise fail("invalid_request", "The state parameter is missing.")

    challenge = _single(args, "code_challenge")
    method = _single(args, "code_challenge_method")
    pkce_required = not client.confidential or require_pkce == "all"
    if method is not None and not challenge:
        raise fail("invalid_request", "code_challenge_method was sent without code_challenge.")
    if challenge is not None:
        if not CODE_CHALLENGE_RE.match(challenge):
            raise fail("invalid_request", "code_challenge must be 43-128 unreserved characters.")
        if method != "S256":
            raise fail("invalid_request", "code_challenge_method must be S256.")
    elif pkce_required:
        raise fail("invalid_request", "This client must use PKCE (code_challenge with S256).")

    scope = normalize_scope(_single(args, "scope"))
    if scope is None:
        raise fail("invalid_scope", "The requested scope is unknown.")

    pending = AuthorizationRequest(
        id=new_secret(32),
        client_pk=client.id,
        client=client,
        redirect_uri=redirect_uri,
        redirect_uri_given=bool(redirect_uris),
        scope=scope,
        state=state,
        code_challenge=challenge or "",
        code_challenge_method=method or "",
        expires_at=now_ms() + ttl * 1000,
    )
    db.session.add(pending)
    db.session.flush()
    return pending


def get_pending_request(request_id: str | None) -> AuthorizationRequest:
    """The stored, unexpired, unused authorize request. Raises PageError otherwise."""
    pending = db.session.get(AuthorizationRequest, request_id) if request_id else None
    if pending is None or pending.used_at or pending.expires_at <= now_ms():
        raise PageError(
            "This sign-in request has expired or was already used. "
            "Go back to the application and start again."
        )
    return pending


def decide(pending: AuthorizationRequest, user: User, allow: bool, *, issuer: str, code_ttl: int) -> str:
    """Record the user's decision on a pending request, exactly once; returns where to send
    the browser. Raises PageError when the request was already decided or expired.
    """
    now = now_ms()
    claimed = db.session.execute(
        update(AuthorizationRequest)
        .where(
            AuthorizationRequest.id == pending.id,
            AuthorizationRequest.used_at == 0,
            AuthorizationRequest.expires_at > now,
        )
        .values(used_at=now)
    )
    if claimed.rowcount != 1:
        raise PageError("This sign-in request was already answered or has expired.")
    if not allow:
        params = [("error", "access_denied"), ("error_description", "The user denied access.")]
        params += [("state", pending.state), ("iss", issuer)]
        return append_query(pending.redirect_uri, params)
    code = new_secret(32)
    db.session.add(
        AuthorizationCode(
            code_hash=hash_secret(code),
            client_pk=pending.client_pk,
            user_id=user.id,
            redirect_uri=pending.redirect_uri,
            redirect_uri_given=pending.redirect_uri_given,
            scope=pending.scope,
            code_challenge=pending.code_challenge,
            code_challenge_method=pending.code_challenge_method,
            expires_at=now + code_ttl * 1000,
        )
    )
    db.session.flush()
    return append_query(pending.redirect_uri, [("state", pending.state), ("code", code), ("iss", issuer)])


# --- codes and tokens -------------------------------------------------------------------


def find_code(code: str, client: Client) -> AuthorizationCode | None:
    """The unexpired code issued to this client (used or not: replay is decided later)."""
    if not code or len(code) > 512:
        return None
    row = db.session.scalar(select(AuthorizationCode).where(AuthorizationCode.code_hash == hash_secret(code)))
    if row is None or row.client_pk != client.id or row.is_expired():
        return None
    return row


def consume_code(code: AuthorizationCode) -> bool:
    """Mark the code used; True for exactly one caller across all workers and hosts."""
    result = db.session.execute(
        update(AuthorizationCode)
        .where(AuthorizationCode.id == code.id, AuthorizationCode.used_at == 0)
        .values(used_at=now_ms())
    )
    return result.rowcount == 1


def revoke_tokens_of_code(code_id: str) -> int:
    """RFC 6749 §4.1.2: a replayed code revokes every token issued from it."""
    # Every loser of a redemption race gets here; the code row is their one lock point, so
    # on PostgreSQL they queue instead of deadlocking over the token rows.
    db.session.execute(select(AuthorizationCode.id).where(AuthorizationCode.id == code_id).with_for_update())
    return _revoke_where(Token.code_id == code_id)


def revoke_family(family_id: str) -> int:
    """RFC 9700 §4.14: reuse of a retired refresh token revokes the whole family."""
    # The family's first row (its id is the family id) is the one lock point of everybody
    # revoking the family, for the same reason as above.
    db.session.execute(select(Token.id).where(Token.id == family_id).with_for_update())
    return _revoke_where(Token.family_id == family_id)


def _revoke_where(condition) -> int:
    result = db.session.execute(
        update(Token).where(condition, Token.revoked_at == 0).values(revoked_at=now_ms())
    )
    return result.rowcount


def find_refresh_token(raw: str) -> Token | None:
    return find_token(raw, "refresh_token")


def find_token(raw: str, kind: str) -> Token | None:
    """The token row whose access (kind='access_token') or refresh token is `raw`."""
    if not raw or len(raw) > 512:
        return None
    column = Token.refresh_token_hash if kind == "refresh_token" else Token.access_token_hash
    return db.session.scalar(select(Token).where(column == hash_secret(raw)))


def revoke_token_row(token: Token) -> None:
    _revoke_where(Token.id == token.id)


def retire_refresh_token(token: Token) -> bool:
    """Retire a refresh token on use; True for exactly one caller (rotation, SPEC 2.4)."""
    result = db.session.execute(
        update(Token)
        .where(Token.id == token.id, Token.refresh_used_at == 0, Token.revoked_at == 0)
        .values(refresh_used_at=now_ms())
    )
    return result.rowcount == 1


def store_token(
    token: dict,
    *,
    client: Client,
    user: User,
    grant_type: str,
    granted_scope: str,
    family_id: str | None = None,
    code_id: str | None = None,
    refresh_ttl: int,
) -> Token:
    """Persist a freshly generated token response as hashes."""
    now = now_ms()
    refresh = token.get("refresh_token")
    row_id = new_id()
    row = Token(
        id=row_id,
        client_pk=client.id,
        user_id=user.id,
        access_token_hash=hash_secret(token["access_token"]),
        refresh_token_hash=hash_secret(refresh) if refresh else None,
        scope=token.get("scope") or granted_scope,
        granted_scope=granted_scope,
        grant_type=grant_type,
        family_id=family_id or row_id,  # a family is named after its first token
        code_id=code_id,
        issued_at=now,
        access_expires_at=now + int(token["expires_in"]) * 1000,
        refresh_expires_at=now + refresh_ttl * 1000 if refresh else 0,
    )
    db.session.add(row)
    db.session.flush()
    return row


@dataclass
class BearerIdentity:
    """Who a presented Bearer token speaks for, and with which scopes."""

    user: User
    scopes: frozenset[str]
    client: Client | None
    token_id: str


def resolve_bearer(raw: str) -> BearerIdentity | None:
    """SPEC 2.6: an unexpired, unrevoked token of an active user whose client still exists."""
    if not raw or len(raw) > 512:
        return None
    digest = hash_secret(raw)
    if raw.startswith(PAT_PREFIX):
        pat = db.session.scalar(select(PersonalAccessToken).where(PersonalAccessToken.token_hash == digest))
        if pat is None or pat.revoked_at or not pat.user.is_active:
            return None
        return BearerIdentity(pat.user, frozenset({"api", "profile"}), None, pat.id)
    token = db.session.scalar(select(Token).where(Token.access_token_hash == digest))
    if token is None or token.is_revoked() or token.is_expired() or not token.user.is_active:
        return None
    return BearerIdentity(token.user, frozenset(token.scope.split()), token.client, token.id)


def cleanup_expired(batch_size: int = 5000) -> dict[str, int]:
    """Delete expired codes, pending requests and tokens in batches (SPEC 2.8)."""
    now = now_ms()
    counts: dict[str, int] = {}
    targets = {
        "authorization_requests": (AuthorizationRequest, AuthorizationRequest.expires_at < now),
        "codes": (AuthorizationCode, AuthorizationCode.expires_at < now),
        # A token row is dead when its access token is expired and its refresh token can no
        # longer be used (expired, or none was issued).
        "tokens": (
            Token,
            (Token.access_expires_at < now) & (Token.refresh_expires_at < now),
        ),
    }
    targets["auth_failures"] = (AuthFailure, AuthFailure.at < now - THROTTLE_RETENTION_MS)
    for name, (model, condition) in targets.items():
        total = 0
        while True:
            ids = list(db.session.scalars(select(model.id).where(condition).limit(batch_size)))
            if not ids:
                break
            db.session.execute(delete(model).where(model.id.in_(ids)))
            db.session.commit()
            total += len(ids)
        counts[name] = total
    return counts
