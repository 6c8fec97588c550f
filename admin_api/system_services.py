"""System operations (SPEC 4.6, 8.13): health, logs, limits, the support packet."""

from __future__ import annotations

import io
import json
import os
import platform
import sys
import time
import zipfile
from importlib import metadata

import yaml
from sqlalchemy import func, text

import logs
from admin_api import config_store, file_store, license_services
from errors import AppError, NotFound
from extensions import db
from oauth.models import User
from utils import now_ms

OK, UNHEALTHY = "OK", "UNHEALTHY"
LOGS_OFF_ID = "api.system.logs.not_enabled.app_error"
LOGS_UNREADABLE_ID = "api.system.logs.download.app_error"
# Tables other features own; counted when they exist in this deployment's schema.
_COUNTED_TABLES = {
    "users": "users",
    "teams": "teams",
    "channels": "channels",
    "oauth_clients": "oauth_clients",
    "oauth_tokens": "oauth_tokens",
    "personal_access_tokens": "personal_access_tokens",
    "files": "files",
}
_JOB_COLUMNS = ("id", "type", "status", "progress", "create_at", "start_at", "last_activity_at")


def version() -> str:
    try:
        return metadata.version("authflow")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def database_ok() -> bool:
    """A real round trip to the database."""
    try:
        return db.session.execute(text("SELECT 1")).scalar() == 1
    except Exception:
        db.session.rollback()
        return False


def server_status(*, with_root: bool) -> tuple[bool, dict]:
    """(healthy, the status fields) from a DB round trip and a real file store probe."""
    db_ok = database_ok()
    store_ok = file_store.probe_running().ok if db_ok else False
    fields = {
        "database_status": OK if db_ok else UNHEALTHY,
        "filestore_status": OK if store_ok else UNHEALTHY,
    }
    if with_root:
        fields["root_status"] = hasattr(os, "geteuid") and os.geteuid() == 0
    return db_ok and store_ok, fields


def log_file_to_download(instance_path: str) -> bytes:
    """The current log file. Raises NotFound (file logging off) or AppError 500 (unreadable)."""
    log_settings = config_store.get_config()["LogSettings"]
    if not log_settings["EnableFile"]:
        raise NotFound("File logging is not enabled.", error_id=LOGS_OFF_ID)
    path = logs.log_file_path(log_settings, instance_path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise AppError(f"The log file cannot be read: {exc.strerror}.", error_id=LOGS_UNREADABLE_ID) from exc


def _active_users() -> int:
    return db.session.scalar(
        db.select(func.count()).select_from(User).where(User.delete_at == 0, User.is_bot.is_(False))
    ) or 0


def server_limits(*, is_admin: bool) -> dict:
    """Mattermost's server limits; user figures only for admins (0 = unlimited)."""
    limit = license_services.user_limit() if is_admin else 0
    return {
        "maxUsersLimit": limit,
        "maxUsersHardLimit": limit,
        "activeUserCount": _active_users() if is_admin else 0,
        "postHistoryLimit": 0,
        "lastAccessiblePostTime": 0,
    }


def _count(table_name: str) -> int | None:
    table = db.metadata.tables.get(table_name)
    if table is None:
        return None
    return db.session.scalar(db.select(func.count()).select_from(table))


def _stats() -> dict:
    stats = {key: _count(name) for key, name in _COUNTED_TABLES.items()}
    stats["active_users"] = _active_users()
    return {k: v for k, v in stats.items() if v is not None}


def _jobs() -> list[dict]:
    table = db.metadata.tables.get("jobs")
    if table is None:
        return []
    columns = [table.c[name] for name in _JOB_COLUMNS if name in table.c]
    order = table.c["create_at"].desc() if "create_at" in table.c else None
    query = db.select(*columns).limit(50)
    if order is not None:
        query = query.order_by(order)
    return [dict(row._mapping) for row in db.session.execute(query)]


def _schema_revision() -> str:
    try:
        return db.session.execute(text("SELECT version_num FROM alembic_version")).scalar() or ""
    except Exception:
        db.session.rollback()
        return ""


def _diagnostics(config: dict) -> dict:
    probe = file_store.probe_running()
    engine = db.engine
    return {
        "authflow_version": version(),
        "python_version": sys.version.split()[0],
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "database": {
            "kind": engine.dialect.name,
            "server_version": ".".join(str(p) for p in (engine.dialect.server_version_info or ())),
            "schema_revision": _schema_revision(),
            "status": OK if database_ok() else UNHEALTHY,
        },
        "file_store": {
            "driver": config["FileSettings"]["DriverName"],
            "status": OK if probe.ok else UNHEALTHY,
            "error_id": probe.error_id or "",
        },
    }


def support_packet(*, requested_by: str, include_logs: bool, instance_path: str) -> tuple[str, bytes]:
    """(file name, zip bytes) of the support packet. Secrets are masked in the configuration
    and blanked wherever else their values might appear (the log file).
    """
    config = config_store.get_config()
    lic = license_services.current_license()
    generated = time.gmtime()
    files: dict[str, str] = {
        "metadata.yaml": _yaml({
            "version": 1,
            "type": "support-packet",
            "generated_at": now_ms(),
            "generated_by": requested_by,
            "server_version": version(),
            "site_url": config["ServiceSettings"]["SiteURL"],
            "licensed": lic is not None,
            "license_id": lic["id"] if lic else "",
            "sku_short_name": lic["sku_short_name"] if lic else "",
        }),
        "stats.yaml": _yaml(_stats()),
        "jobs.yaml": _yaml({"jobs": _jobs()}),
        "diagnostics.yaml": _yaml(_diagnostics(config)),
        "sanitized_config.json": json.dumps(config_store.mask(config), indent=2, sort_keys=True),
    }
    log_settings = config["LogSettings"]
    if include_logs and log_settings["EnableFile"]:
        try:
            with open(logs.log_file_path(log_settings, instance_path), "rb") as fh:
                files[logs.LOG_FILE_NAME] = fh.read().decode("utf-8", "replace")
        except OSError:
            pass  # nothing logged yet: the packet is still useful without it
    secrets = [s for s in config_store.secret_values(config) if len(s) >= 4]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            for secret in secrets:
                content = content.replace(secret, config_store.PLACEHOLDER)
            archive.writestr(name, content)
    name = time.strftime("authflow_support_packet_%Y-%m-%dT%H-%M.zip", generated)
    return name, buffer.getvalue()


def _yaml(data) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
