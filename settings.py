"""Settings: defaults safe for development, overridden by the environment.

Only process-level settings live here (database, secret key, token lifetimes). The server
configuration that operators change at run time lives in the database (SPEC 3.2).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

DEFAULTS: dict = {
    "AUTHFLOW_ENV": "development",
    "AUTHFLOW_BASE_URL": "",
    "ACCESS_TOKEN_TTL": 3600,
    "REFRESH_TOKEN_TTL": 30 * 24 * 3600,
    "AUTH_CODE_TTL": 600,
    "AUTH_REQUEST_TTL": 600,
    "REQUIRE_PKCE": "public",
    "ALLOW_HTTP_REDIRECTS": False,
    "ALLOW_PRIVATE_REMOTES": False,
    "TRUSTED_PROXIES": 0,
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    "THROTTLE_WINDOW_SECONDS": 600,
    "THROTTLE_MAX_IP_FAILURES": 10,
    "THROTTLE_MAX_USER_FAILURES": 50,
    "SQLALCHEMY_ENGINE_OPTIONS": {},
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "SESSION_COOKIE_NAME": "authflow_session",
    "WTF_CSRF_TIME_LIMIT": 3600,
    "WTF_CSRF_SSL_STRICT": False,
    # Comma-separated base64 raw Ed25519 public keys that may sign licenses (SPEC 8.9).
    "LICENSE_PUBLIC_KEYS": "",
}

_INT_KEYS = {
    "ACCESS_TOKEN_TTL",
    "REFRESH_TOKEN_TTL",
    "AUTH_CODE_TTL",
    "AUTH_REQUEST_TTL",
    "TRUSTED_PROXIES",
    "THROTTLE_WINDOW_SECONDS",
    "THROTTLE_MAX_IP_FAILURES",
    "THROTTLE_MAX_USER_FAILURES",
}
_BOOL_KEYS = {"ALLOW_HTTP_REDIRECTS", "ALLOW_PRIVATE_REMOTES"}


class SettingsError(RuntimeError):
    """The process cannot start with these settings; the message names the variable."""


def _parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def database_uri(raw: str | None, instance_path: str) -> str:
    """DATABASE_URL as SQLAlchemy wants it; SQLite in the instance folder by default."""
    if not raw:
        return "sqlite:///" + str(Path(instance_path) / "authflow.db")
    # Plain postgres URLs (as Heroku-style hosts give them) use psycopg 3.
    for prefix in ("postgres://", "postgresql://"):
        if raw.startswith(prefix):
            return "postgresql+psycopg://" + raw[len(prefix):]
    return raw


def from_environment(environ: dict, instance_path: str) -> dict:
    """Read DATABASE_URL, SECRET_KEY and AUTHFLOW_* variables into a settings dict."""
    out: dict = {}
    for key in DEFAULTS:
        env_name = key if key.startswith("AUTHFLOW_") else f"AUTHFLOW_{key}"
        if env_name not in environ:
            continue
        raw = environ[env_name]
        if key in _INT_KEYS:
            try:
                out[key] = int(raw)
            except ValueError as exc:
                raise SettingsError(f"{env_name} must be an integer, not {raw!r}") from exc
        elif key in _BOOL_KEYS:
            out[key] = _parse_bool(env_name, raw)
        else:
            out[key] = raw
    if "AUTHFLOW_MAX_PAYLOAD_BYTES" in environ:
        out["MAX_CONTENT_LENGTH"] = int(environ["AUTHFLOW_MAX_PAYLOAD_BYTES"])
    out["SQLALCHEMY_DATABASE_URI"] = database_uri(environ.get("DATABASE_URL"), instance_path)
    if environ.get("SECRET_KEY"):
        out["SECRET_KEY"] = environ["SECRET_KEY"]
    return out


def ensure_secret_key(config: dict, instance_path: str) -> None:
    """SECRET_KEY is required in production; in development one is made once and kept."""
    if config.get("SECRET_KEY"):
        return
    if config.get("AUTHFLOW_ENV") == "production":
        raise SettingsError("SECRET_KEY must be set when AUTHFLOW_ENV=production")
    path = Path(instance_path) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: when several workers start at once, exactly one writes the key.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(48))
    for _ in range(50):
        key = path.read_text().strip()
        if key:
            config["SECRET_KEY"] = key
            return
        time.sleep(0.02)
    raise SettingsError(f"{path} is empty; remove it or set SECRET_KEY")


def validate(config: dict) -> None:
    if config["REQUIRE_PKCE"] not in {"public", "all"}:
        raise SettingsError("AUTHFLOW_REQUIRE_PKCE must be 'public' or 'all'")
    base = config.get("AUTHFLOW_BASE_URL", "")
    if base and not base.startswith(("http://", "https://")):
        raise SettingsError("AUTHFLOW_BASE_URL must be an absolute http(s) URL")
    if not base and config.get("AUTHFLOW_ENV") == "production":
        # The issuer and the login URL come from configuration, never from the Host header.
        raise SettingsError("AUTHFLOW_BASE_URL must be set when AUTHFLOW_ENV=production")
    config["AUTHFLOW_BASE_URL"] = base.rstrip("/")
