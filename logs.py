"""JSON-lines logging (SPEC 3.4): one object per line with the request id. Never a secret:
no Authorization header, no body, no query string is ever logged (tokens travel there), and
the configured secret values are replaced by the placeholder wherever they would appear.

LogSettings (EnableFile, FileLocation, FileLevel) come from the stored configuration; each
process re-reads them at most every APPLY_INTERVAL seconds, so a change reaches every worker
within 5 s without a restart.
"""

from __future__ import annotations

import fcntl
import json
import logging
import logging.handlers
import os
import sys
import threading
import time

from flask import Flask, current_app, g, request

_FIELDS = ("request_id", "method", "path", "status", "duration_ms", "user_id")


LOG_FILE_NAME = "authflow.log"
APPLY_INTERVAL = 2.0
MAX_BYTES = 10 * 1024 * 1024
BACKUP_COUNT = 5
REDACTED = "*" * 32
_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "ERROR": logging.ERROR}

# Secret values to blank out of every line (the configured secrets; refreshed with LogSettings).
_redact: tuple[str, ...] = ()


def set_redactions(values) -> None:
    global _redact
    _redact = tuple(sorted({v for v in values if isinstance(v, str) and len(v) >= 4}, key=len, reverse=True))


def redact(text: str) -> str:
    for value in _redact:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(self._format(record))

    def _format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "msg": record.getMessage(),
        }
        for field in _FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                entry[field] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


class SharedRotatingFileHandler(logging.handlers.WatchedFileHandler):
    """Size-rotated log file that several worker processes can share.

    Rotation happens under an flock by whichever process first sees the file too big; the
    others notice the new inode (WatchedFileHandler) and reopen, so no line is lost.
    """

    def __init__(self, filename: str, max_bytes: int = MAX_BYTES, backup_count: int = BACKUP_COUNT):
        super().__init__(filename, encoding="utf-8")
        self.max_bytes, self.backup_count = max_bytes, backup_count

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if os.stat(self.baseFilename).st_size >= self.max_bytes:
                self._rotate()
        except OSError:
            pass
        super().emit(record)

    def _rotate(self) -> None:
        with open(self.baseFilename + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if os.stat(self.baseFilename).st_size < self.max_bytes:
                return  # another process rotated it meanwhile
            for i in range(self.backup_count - 1, 0, -1):
                src = f"{self.baseFilename}.{i}"
                if os.path.exists(src):
                    os.replace(src, f"{self.baseFilename}.{i + 1}")
            os.replace(self.baseFilename, self.baseFilename + ".1")
        self.reopenIfNeeded()


def log_file_path(log_settings: dict, instance_path: str) -> str:
    """Where the log file is: LogSettings.FileLocation (a folder; "" = <instance>/logs)."""
    folder = log_settings.get("FileLocation") or os.path.join(instance_path, "logs")
    return os.path.join(os.path.abspath(folder), LOG_FILE_NAME)


_apply_lock = threading.Lock()


def apply_settings(app: Flask, log_settings: dict, secrets=()) -> None:
    """Attach, move or detach the file handler to match LogSettings; refresh redactions."""
    set_redactions(secrets)
    logger = logging.getLogger("authflow")
    wanted = log_file_path(log_settings, app.instance_path) if log_settings.get("EnableFile") else None
    level = _LEVELS.get(log_settings.get("FileLevel", "INFO"), logging.INFO)
    with _apply_lock:
        current = next((h for h in logger.handlers if getattr(h, "_authflow_file", False)), None)
        if current is not None and (wanted is None or current.baseFilename != wanted):
            logger.removeHandler(current)
            current.close()
            current = None
        if wanted is not None and current is None:
            try:
                os.makedirs(os.path.dirname(wanted), exist_ok=True)
                current = SharedRotatingFileHandler(wanted)
            except OSError as exc:
                logger.warning("cannot open log file: %s", exc.strerror)
            else:
                current.setFormatter(JsonFormatter())
                current._authflow_file = True  # type: ignore[attr-defined]
                logger.addHandler(current)
        if current is not None:
            current.setLevel(level)
        logger.setLevel(min(logging.INFO, level) if current is not None else logging.INFO)


def refresh_from_config(app: Flask, *, force: bool = False) -> None:
    """Re-read LogSettings from the stored configuration when APPLY_INTERVAL has passed."""
    state = app.extensions.setdefault("authflow_logs", {"checked": 0.0})
    now = time.monotonic()
    if not force and now - state["checked"] < APPLY_INTERVAL:
        return
    state["checked"] = now
    from admin_api import config_store

    try:
        config = config_store.get_config()
    except Exception as exc:  # the database may be down; logging must keep working
        from extensions import db

        db.session.rollback()
        logging.getLogger("authflow").warning("cannot read LogSettings: %s", type(exc).__name__)
        return
    apply_settings(app, config["LogSettings"], config_store.secret_values(config))


def configure(app: Flask) -> None:
    logger = logging.getLogger("authflow")
    if not any(getattr(h, "_authflow", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(JsonFormatter())
        handler._authflow = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    @app.before_request
    def _start_timer():
        g.started = time.perf_counter()
        refresh_from_config(current_app._get_current_object())

    @app.after_request
    def _access_log(response):
        started = g.get("started")
        caller = g.get("caller")
        logger.info(
            "request",
            extra={
                "request_id": g.get("request_id"),
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2) if started else None,
                "user_id": caller.user.id if caller else None,
            },
        )
        return response
