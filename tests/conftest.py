"""Shared fixtures: an app on a throwaway database (SQLite file, or PostgreSQL when
DATABASE_URL is set), per-test cleanup, factories, and a guard against non-loopback traffic.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import os
import re
import secrets
import socket
from urllib.parse import parse_qs, urlsplit

import pytest

from app import create_app
from extensions import db
from oauth import services

# --- no traffic leaves the machine ---------------------------------------------------------

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(address) -> None:
    if isinstance(address, (str, bytes)):  # unix socket
        return
    host = address[0]
    if host in ("localhost",):
        return
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError as exc:
        raise RuntimeError(f"test tried to connect to non-literal host {host!r}") from exc
    if not ip.is_loopback:
        raise RuntimeError(f"test tried to connect to non-loopback address {host}")


def _guarded_connect(self, address):
    _check_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check_address(address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex

# Cheap Argon2 parameters for the tests' many users (the hashes record their own parameters,
# so verification is unaffected); live servers started by the tests use the real ones.
from argon2 import PasswordHasher  # noqa: E402

import oauth.passwords as _passwords  # noqa: E402

_passwords._hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
_passwords._DUMMY_HASH = _passwords._hasher.hash("authflow-timing-equaliser")

# --- the app and its database ------------------------------------------------------------

BASE_URL = "http://localhost"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory) -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return "sqlite:///" + str(tmp_path_factory.mktemp("db") / "authflow-test.db")


@pytest.fixture(scope="session")
def app_config(database_url, tmp_path_factory) -> dict:
    return {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": _sqlalchemy_url(database_url),
        "SECRET_KEY": "test-secret-key-" + secrets.token_hex(8),
        "AUTHFLOW_BASE_URL": BASE_URL,
        "ALLOW_PRIVATE_REMOTES": True,
    }


def _sqlalchemy_url(url: str) -> str:
    from settings import database_uri

    return database_uri(url, "/nonexistent")


@pytest.fixture(scope="session")
def app(app_config):
    application = create_app(app_config)
    with application.app_context():
        from flask_migrate import upgrade

        upgrade()
    yield application
    # Close pooled connections; psycopg warns (an error here) about ones left to the GC.
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(autouse=True)
def _clean_database(request):
    """Every test starts from empty tables (also those that live servers wrote)."""
    yield
    if "app" not in request.fixturenames:
        return
    application = request.getfixturevalue("app")
    with application.app_context():
        db.session.remove()
        with db.engine.begin() as conn:
            for table in reversed(db.metadata.sorted_tables):
                conn.execute(table.delete())
    # The tables were emptied behind the config store's back: drop its per-process cache.
    application.extensions.pop("authflow_config_cache", None)


@pytest.fixture
def ctx(app):
    with app.app_context():
        yield
        db.session.remove()


@pytest.fixture
def client(app):
    return app.test_client()


# --- factories ---------------------------------------------------------------------------

PASSWORD = "correct horse battery"


@pytest.fixture
def make_user(app):
    def make(username: str | None = None, *, admin: bool = False, password: str = PASSWORD, **kw):
        username = username or "user" + secrets.token_hex(4)
        with app.app_context():
            roles = "system_user system_admin" if admin else kw.pop("roles", "system_user")
            user = services.create_user(username, f"{username}@example.org", password, roles=roles, **kw)
            db.session.commit()
            db.session.refresh(user)
            db.session.expunge(user)
            return user

    return make


@pytest.fixture
def make_client(app):
    def make(*, redirect_uris=None, public: bool = False, trusted: bool = False, grant_types=None, name="Test App"):
        with app.app_context():
            client_row, secret = services.create_client(
                name,
                redirect_uris or ["https://app.example.org/callback"],
                confidential=not public,
                trusted=trusted,
                grant_types=grant_types,
            )
            db.session.commit()
            db.session.refresh(client_row)
            db.session.expunge(client_row)
            client_row.secret = secret
            return client_row

    return make


@pytest.fixture
def make_pat(app):
    def make(user) -> str:
        with app.app_context():
            _, raw = services.create_personal_token(services.get_user(user.id), "test")
            db.session.commit()
            return raw

    return make


# --- OAuth helpers -----------------------------------------------------------------------


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def query_of(location: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query, keep_blank_values=True).items()}


CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = CSRF_RE.search(html)
    assert match, "no CSRF token in page"
    return match.group(1)


def login(web, username: str, password: str = PASSWORD):
    page = web.get("/login")
    return web.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": csrf_from(page.get_data(as_text=True)), "next": "/"},
    )


def authorize_url(client_row, **params) -> str:
    from urllib.parse import urlencode

    query = {"client_id": client_row.client_id, "response_type": "code", "state": "st-123"}
    query.update({k: v for k, v in params.items() if v is not None})
    return "/index.php/apps/oauth2/authorize?" + urlencode(query)


@pytest.fixture
def get_code(client):
    """Run authorize → login → consent (Allow) in the test client; returns (code, verifier)."""

    def run(client_row, user, *, pkce: bool = True, scope: str | None = None, redirect_uri: str | None = None):
        verifier, challenge = pkce_pair() if pkce else (None, None)
        resp = client.get(
            authorize_url(
                client_row,
                code_challenge=challenge,
                code_challenge_method="S256" if pkce else None,
                scope=scope,
                redirect_uri=redirect_uri,
            )
        )
        assert resp.status_code == 303, resp.get_data(as_text=True)
        flow = resp.headers["Location"].replace(BASE_URL, "")
        assert login(client, user.username).status_code == 303
        page = client.get(flow)
        assert page.status_code == 200
        resp = client.post(flow, data={"decision": "allow", "csrf_token": csrf_from(page.get_data(as_text=True))})
        assert resp.status_code == 303
        params = query_of(resp.headers["Location"])
        return params["code"], verifier

    return run


TOKEN_URL = "/index.php/apps/oauth2/api/v1/token"


def basic(client_id: str, secret: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()}
