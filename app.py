"""The application factory: configuration, extensions, blueprints, errors, CLI.

No database work and no network at import or factory time.
"""

from __future__ import annotations

import os
import re

from flask import Flask, g, request
from flask_wtf.csrf import generate_csrf
from sqlalchemy import event
from sqlalchemy.engine import Engine
from werkzeug.middleware.proxy_fix import ProxyFix

import logs
import settings
from errors import register_error_handlers
from extensions import db, migrate
from utils import new_id

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
HTML_SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    app.json.sort_keys = False  # keep the documented field order (e.g. the token response)
    app.config.from_mapping(settings.DEFAULTS)
    app.config.from_mapping(settings.from_environment(dict(os.environ), app.instance_path))
    if config:
        app.config.from_mapping(config)
    settings.ensure_secret_key(app.config, app.instance_path)
    settings.validate(app.config)
    from admin_api.config_store import check_environment
    from admin_api.license_services import parse_public_keys

    check_environment()
    parse_public_keys(app.config["LICENSE_PUBLIC_KEYS"])
    _configure_database(app)

    if app.config["TRUSTED_PROXIES"]:
        n = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_prefix=n)

    from oauth.sessions import AuthflowSessionInterface

    app.session_interface = AuthflowSessionInterface()
    db.init_app(app)
    # Batch mode: SQLite cannot ALTER most things, so Alembic copies the table instead.
    migrations_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
    migrate.init_app(app, db, directory=migrations_dir, render_as_batch=True)
    app.jinja_env.globals["csrf_token"] = generate_csrf

    from oauth.server import init_oauth

    init_oauth(app)
    _register_blueprints(app)
    register_error_handlers(app)
    _register_request_hooks(app)
    logs.configure(app)
    _register_cli(app)
    return app


def _configure_database(app: Flask) -> None:
    uri = app.config["SQLALCHEMY_DATABASE_URI"]
    options = dict(app.config.get("SQLALCHEMY_ENGINE_OPTIONS") or {})
    if uri.startswith("sqlite"):
        options.setdefault("connect_args", {"timeout": 30})
        if uri.startswith("sqlite:///") and not uri.startswith("sqlite:///:memory:"):
            os.makedirs(os.path.dirname(uri[len("sqlite:///"):]) or ".", exist_ok=True)
    else:
        options.setdefault("pool_pre_ping", True)
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = options


@event.listens_for(Engine, "connect")
def _sqlite_on_connect(dbapi_connection, connection_record):
    """SQLite: WAL for concurrent readers, foreign keys on, and transactions we begin ourselves
    (see _sqlite_begin) so that every write transaction takes the lock up front.
    """
    module = type(dbapi_connection).__module__
    if not module.startswith("sqlite3"):
        return
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL never corrupts the database; a power cut may lose the last commits.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


@event.listens_for(Engine, "begin")
def _sqlite_begin(conn):
    # BEGIN IMMEDIATE: a transaction that reads then writes cannot fail half-way with
    # "database is locked" when another worker writes; it waits (busy_timeout) instead.
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def _register_blueprints(app: Flask) -> None:
    from admin_api.routes import bp as api_bp
    from admin_api.routes import public_bp
    from oauth.routes import bp as oauth_bp

    app.register_blueprint(oauth_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(public_bp)


def _register_request_hooks(app: Flask) -> None:
    @app.before_request
    def _request_id():
        incoming = request.headers.get("X-Request-Id", "")
        g.request_id = incoming if _REQUEST_ID_RE.match(incoming) else new_id()

    @app.after_request
    def _headers(response):
        response.headers["X-Request-Id"] = g.get("request_id") or new_id()
        if response.mimetype == "text/html":
            for key, value in HTML_SECURITY_HEADERS.items():
                response.headers.setdefault(key, value)
        return response


def _register_cli(app: Flask) -> None:
    from admin_api.cli import COMMANDS as admin_commands
    from oauth.cli import COMMANDS as oauth_commands

    for command in oauth_commands + admin_commands:
        app.cli.add_command(command)
