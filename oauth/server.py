"""Authlib's authorization server wired to our models (SPEC 2.4).

Authlib runs the grant flow; the subclasses here add what the SPEC asks beyond it: JSON
bodies, codes and refresh tokens consumed with conditional UPDATEs (exactly one winner),
replay and reuse revocation, PKCE rules, and RFC 6749 §5.2 client authentication errors.
"""

from __future__ import annotations

import hmac
import json
from collections import defaultdict

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import rfc7009, rfc7662
from authlib.oauth2.rfc6749 import ClientAuthentication, OAuth2Payload, OAuth2Request, grants
from authlib.oauth2.rfc6749.errors import (
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    UnauthorizedClientError,
)
from authlib.oauth2.rfc6749.util import extract_basic_authorization
from authlib.oauth2.rfc7636 import CodeChallenge, create_s256_code_challenge
from flask import current_app
from flask import request as flask_request
from werkzeug.datastructures import MultiDict

from extensions import db
from oauth import services, throttle
from oauth.models import Client, Token
from oauth.scopes import is_subset, normalize_scope
from utils import new_secret, now_ms

TOKEN_PATH = "/index.php/apps/oauth2/api/v1/token"
DEFAULT_DESCRIPTIONS = {
    "unsupported_grant_type": "The grant_type is not supported.",
    "invalid_grant": "The grant is invalid, expired, revoked or issued to another client.",
    "invalid_scope": "The requested scope is invalid or exceeds the granted scope.",
    "invalid_client": "Client authentication failed.",
    "unauthorized_client": "The client may not use this grant type.",
    "invalid_request": "The request is malformed.",
}
VERIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


# --- the request: one body, JSON or form -------------------------------------------------


def read_body() -> MultiDict:
    """The token/revoke/introspect parameters from a JSON or form body.

    Raises InvalidRequestError for a malformed body or a parameter sent twice.
    """
    if flask_request.is_json:
        try:
            data = json.loads(flask_request.get_data(cache=True) or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidRequestError("The request body is not valid JSON.") from exc
        if not isinstance(data, dict):
            raise InvalidRequestError("The request body must be a JSON object.")
        body = MultiDict()
        for key, value in data.items():
            if value is None:
                continue
            if not isinstance(value, str):
                raise InvalidRequestError(f"The {key} parameter must be a string.")
            body.add(key, value)
        return body
    body = MultiDict(flask_request.form)
    for key in body:
        if len(body.getlist(key)) > 1:
            raise InvalidRequestError(f"The {key} parameter was sent more than once.")
    return body


class BodyPayload(OAuth2Payload):
    def __init__(self, body: MultiDict):
        self._body = body

    @property
    def data(self):
        return self._body

    @property
    def datalist(self):
        values = defaultdict(list)
        for key in self._body:
            values[key].extend(self._body.getlist(key))
        return values


class BodyOAuth2Request(OAuth2Request):
    """An Authlib request whose parameters come only from the body (never the query)."""

    def __init__(self, body: MultiDict):
        super().__init__(flask_request.method, flask_request.url, headers=flask_request.headers)
        self._form = body
        self.payload = BodyPayload(body)

    @property
    def args(self):
        return MultiDict()

    @property
    def form(self):
        return self._form


class AuthflowAuthorizationServer(AuthorizationServer):
    client_authentication: AuthflowClientAuthentication

    def authenticate_client(self, request, methods, endpoint="token"):
        return self.client_authentication(request, methods, endpoint)

    def create_oauth2_request(self, request):
        if isinstance(request, OAuth2Request):
            return request
        return BodyOAuth2Request(read_body())

    def handle_error_response(self, request, error):
        # SPEC 2.4: every error body has an error_description.
        if not error.description:
            error.description = DEFAULT_DESCRIPTIONS.get(error.error, "The request was refused.")
        return super().handle_error_response(request, error)

    def handle_response(self, status_code, payload, headers):
        response = super().handle_response(status_code, payload, headers)
        response.headers["Cache-Control"] = "no-store"
        response.headers["Pragma"] = "no-cache"
        return response


# --- client authentication (RFC 6749 §2.3, SPEC 2.4 and 8.2) -----------------------------


class BasicInvalidClientError(InvalidClientError):
    """A failed HTTP Basic login: 401 with a Basic challenge (RFC 6749 §5.2)."""

    status_code = 401

    def get_headers(self):
        headers = [h for h in super().get_headers() if h[0] != "WWW-Authenticate"]
        headers.append(("WWW-Authenticate", 'Basic realm="authflow", error="invalid_client"'))
        return headers


class AuthflowClientAuthentication(ClientAuthentication):
    """One decision for every endpoint that authenticates clients.

    Every failure is reported to `on_failure` (throttling, SPEC 2.7) before it is raised.
    """

    def __init__(self, query_client, on_failure=None, on_success=None):
        super().__init__(query_client)
        self.on_failure = on_failure or (lambda client_id: None)
        self.on_success = on_success or (lambda client: None)

    def authenticate(self, request, methods, endpoint="token"):
        body = request.form
        basic_id, basic_secret = extract_basic_authorization(request.headers)
        has_basic = basic_id is not None
        body_id, body_secret = body.get("client_id"), body.get("client_secret")
        if has_basic and (body_secret or (body_id and body_id != basic_id)):
            raise InvalidRequestError("Use one client authentication method, not two.")
        if has_basic:
            client = self.query_client(basic_id)
            if client is not None and not client.confidential and not basic_secret:
                # requests-oauthlib sends Basic with an empty secret for public clients.
                return self._accept(request, client, "none")
            if client is None or not basic_secret or not client.check_client_secret(basic_secret):
                self.on_failure(basic_id)
                raise BasicInvalidClientError(description="Client authentication failed.")
            return self._accept(request, client, "client_secret_basic")
        client = self.query_client(body_id) if body_id else None
        if client is None:
            self.on_failure(body_id)
            raise InvalidClientError(description="Client authentication failed.")
        if body_secret:
            if not client.check_client_secret(body_secret):
                self.on_failure(body_id)
                raise InvalidClientError(description="Client authentication failed.")
            return self._accept(request, client, "client_secret_post")
        if client.confidential:
            self.on_failure(body_id)
            raise InvalidClientError(description="This client must authenticate.")
        return self._accept(request, client, "none")

    def _accept(self, request, client, method):
        request.auth_method = method
        self.on_success(client)
        return client


# --- grants -------------------------------------------------------------------------------


ALL_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS

    def query_authorization_code(self, code, client):
        return services.find_code(code, client)

    def create_token_response(self):
        """Consume the code (one winner), or revoke what it issued when it was replayed."""
        client = self.request.client
        code = self.request.authorization_code
        if not services.consume_code(code):
            services.revoke_tokens_of_code(code.id)
            db.session.commit()
            raise InvalidGrantError("The authorization code was already used.")
        user = services.get_user(code.user_id)
        if not user.is_active:
            raise InvalidGrantError("The user is deactivated.")
        self.request.user = user
        token = self.generate_token(
            user=user, scope=code.scope, include_refresh_token=client.check_grant_type("refresh_token")
        )
        row = save_token_row(token, self.request, self.GRANT_TYPE, code.scope, code_id=code.id)
        db.session.commit()
        return 200, response_body(token, row), self.TOKEN_RESPONSE_HEADER


class PKCE(CodeChallenge):
    """RFC 7636 with SPEC 8.2's errors: a missing or wrong verifier is invalid_grant, a
    verifier for a code that had no challenge is invalid_request (downgrade, RFC 9700 §4.8).
    """

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant, redirect_uri):  # authorize is ours (services)
        return None

    def validate_code_verifier(self, grant, result):
        request = grant.request
        verifier = request.form.get("code_verifier")
        challenge = request.authorization_code.code_challenge
        if not challenge:
            if verifier is not None:
                raise InvalidRequestError("A code_verifier was sent for a code without a challenge.")
            return
        if not verifier:
            raise InvalidGrantError("The code_verifier is missing.")
        if not 43 <= len(verifier) <= 128 or not set(verifier) <= VERIFIER_CHARS:
            raise InvalidGrantError("The code_verifier is invalid.")
        if not hmac.compare_digest(create_s256_code_challenge(verifier), challenge):
            raise InvalidGrantError("The code_verifier does not match the code_challenge.")


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        return services.find_refresh_token(refresh_token)

    def _validate_token_scope(self, token):
        scope = self.request.payload.scope
        if scope is None:
            return
        if normalize_scope(scope) is None or not is_subset(scope, token.granted_scope):
            raise InvalidScopeError("The requested scope exceeds the granted scope.")

    def create_token_response(self):
        """Rotate: retire the presented refresh token (one winner) and issue a new pair.

        A retired or lost-race token is a reuse: the whole family is revoked.
        """
        old: Token = self.request.refresh_token
        if old.revoked_at or old.refresh_expires_at <= now_ms():
            raise InvalidGrantError("The refresh token is expired or revoked.")
        if old.refresh_used_at or not services.retire_refresh_token(old):
            services.revoke_family(old.family_id)
            db.session.commit()
            raise InvalidGrantError("The refresh token was already used.")
        user = old.user
        if not user.is_active:
            raise InvalidGrantError("The user is deactivated.")
        self.request.user = user
        scope = self.request.payload.scope or old.granted_scope
        token = self.generate_token(user=user, scope=scope, include_refresh_token=True)
        row = save_token_row(
            token, self.request, self.GRANT_TYPE, old.granted_scope,
            family_id=old.family_id, code_id=old.code_id,
        )
        db.session.commit()
        return 200, response_body(token, row), self.TOKEN_RESPONSE_HEADER


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    """SPEC 2.5/8.3: confidential clients registered for it get a token that acts as the
    client's service user; no refresh token.
    """

    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def validate_token_request(self):
        client = self.authenticate_token_endpoint_client()
        if not client.confidential or not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError("This client may not use the client_credentials grant.")
        scope = normalize_scope(self.request.payload.scope)
        if scope is None:
            raise InvalidScopeError("The requested scope is unknown.")
        self.request.client = client
        self.request.scope = scope

    def create_token_response(self):
        client = self.request.client
        user = services.service_user_for(client)
        self.request.user = user
        scope = self.request.scope
        token = self.generate_token(user=user, scope=scope, include_refresh_token=False)
        row = save_token_row(token, self.request, self.GRANT_TYPE, scope)
        db.session.commit()
        return 200, response_body(token, row), self.TOKEN_RESPONSE_HEADER


class PresentedToken:
    """A token string found in the database, as an access or a refresh token."""

    def __init__(self, row: Token, kind: str):
        self.row = row
        self.kind = kind

    def check_client(self, client: Client) -> bool:
        return self.row.client_pk == client.id

    def is_expired(self) -> bool:
        if self.kind == "refresh_token":
            return now_ms() >= self.row.refresh_expires_at
        return self.row.is_expired()

    def is_revoked(self) -> bool:
        if self.kind == "refresh_token":
            return self.row.revoked_at != 0 or self.row.refresh_used_at != 0
        return self.row.is_revoked()


def _query_presented(token_string: str, hint: str | None) -> PresentedToken | None:
    order = ["refresh_token", "access_token"] if hint == "refresh_token" else ["access_token", "refresh_token"]
    for kind in order:
        row = services.find_token(token_string, kind)
        if row is not None:
            return PresentedToken(row, kind)
    return None


def _check_token_param(request) -> None:
    if not request.form.get("token"):
        raise InvalidRequestError("The token parameter is missing.")


class RevocationEndpoint(rfc7009.RevocationEndpoint):
    """RFC 7009. Another client's token is answered 200 and left alone (SPEC 8.4)."""

    CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

    def check_params(self, request, client):
        _check_token_param(request)

    def authenticate_token(self, request, client):
        self.check_params(request, client)
        token = _query_presented(request.form["token"], request.form.get("token_type_hint"))
        return token if token and token.check_client(client) else None

    def query_token(self, token_string, token_type_hint):
        return _query_presented(token_string, token_type_hint)

    def revoke_token(self, token, request):
        # Revoking a refresh token revokes the grant it carries, access tokens included.
        if token.kind == "refresh_token":
            services.revoke_family(token.row.family_id)
        else:
            services.revoke_token_row(token.row)
        db.session.commit()


class IntrospectionEndpoint(rfc7662.IntrospectionEndpoint):
    """RFC 7662. Clients see only their own tokens; anything else is {"active": false}."""

    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def check_params(self, request, client):
        _check_token_param(request)

    def query_token(self, token_string, token_type_hint):
        return _query_presented(token_string, token_type_hint)

    def check_permission(self, token, client, request):
        return token.check_client(client)

    def introspect_token(self, token):
        row = token.row
        refresh = token.kind == "refresh_token"
        return {
            "active": True,
            "client_id": row.client.client_id,
            "user_id": row.user_id,
            "username": row.user.username,
            "scope": row.granted_scope if refresh else row.scope,
            "exp": (row.refresh_expires_at if refresh else row.access_expires_at) // 1000,
            "iat": row.issued_at // 1000,
            "token_type": "refresh_token" if refresh else "Bearer",
        }


def save_token_row(token, request, grant_type, granted_scope, family_id=None, code_id=None) -> Token:
    return services.store_token(
        token,
        client=request.client,
        user=request.user,
        grant_type=grant_type,
        granted_scope=granted_scope,
        family_id=family_id,
        code_id=code_id,
        refresh_ttl=current_app.config["REFRESH_TOKEN_TTL"],
    )


def response_body(token: dict, row: Token) -> dict:
    """SPEC 2.4's success body, in its order."""
    body = {
        "access_token": token["access_token"],
        "token_type": "Bearer",
        "expires_in": int(token["expires_in"]),
    }
    if token.get("refresh_token"):
        body["refresh_token"] = token["refresh_token"]
    body["user_id"] = row.user_id
    body["scope"] = row.scope
    return body


# --- wiring -------------------------------------------------------------------------------


def _query_client(client_id: str) -> Client | None:
    return services.find_client(client_id)


def _save_token(token, request):  # pragma: no cover - our grants save their own rows
    raise RuntimeError("grants save tokens through save_token_row")


# The one server instance. It lives here rather than in extensions.py because its grants need
# the models, and extensions.py must import nothing of ours.
authorization = AuthflowAuthorizationServer()


def init_oauth(app, server: AuthflowAuthorizationServer = authorization) -> None:
    ttl = app.config["ACCESS_TOKEN_TTL"]
    app.config.setdefault("OAUTH2_ACCESS_TOKEN_GENERATOR", lambda *a, **k: new_secret(32))
    app.config.setdefault("OAUTH2_REFRESH_TOKEN_GENERATOR", lambda *a, **k: new_secret(32))
    app.config.setdefault("OAUTH2_TOKEN_EXPIRES_IN", {g: ttl for g in services.KNOWN_GRANT_TYPES})
    server.init_app(app, query_client=_query_client, save_token=_save_token)
    server.client_authentication = AuthflowClientAuthentication(_query_client, on_failure=_client_auth_failed)
    server.register_grant(AuthorizationCodeGrant, [PKCE(required=True)])
    server.register_grant(RefreshTokenGrant)
    server.register_grant(ClientCredentialsGrant)
    server.register_endpoint(RevocationEndpoint)
    server.register_endpoint(IntrospectionEndpoint)


def _client_auth_failed(client_id) -> None:
    """Every failed client authentication counts against the caller's IP (SPEC 2.7)."""
    db.session.rollback()
    throttle.record_failure(ip=flask_request.remote_addr)


