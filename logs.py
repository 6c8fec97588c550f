"""JSON-lines logging (SPEC 3.4): one object per line with the request id. Never a secret:
no Authorization header, no body, no query string is ever logged (tokens travel there).
"""

from __future__ import annotations

import json
import logging
import sys
import time

from flask import Flask, g, request

_FIELDS = ("request_id", "method", "path", "status", "duration_ms", "user_id")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
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
