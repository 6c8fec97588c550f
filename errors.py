"""The error hierarchy and the one place that maps errors to responses (SPEC 1.2).

Services raise these typed errors; views never build error responses themselves. The
response shape depends on where the request went: `/api/v4` gets Mattermost's AppError JSON,
the OAuth JSON endpoints get RFC 6749 bodies, pages get an HTML error page.
"""

from __future__ import annotations

import logging

from flask import Flask, g, jsonify, render_template, request
from marshmallow import ValidationError
from sqlalchemy.exc import DataError, IntegrityError
from werkzeug.exceptions import HTTPException

log = logging.getLogger("authflow")

API_PREFIX = "/api/v4"
OAUTH_API_PREFIX = "/index.php/apps/oauth2/api/"
PUBLIC_FILES_PREFIX = "/files/"


class AppError(Exception):
    """An error with an HTTP status and a machine id (SPEC 1.2)."""

    status = 500
    error_id = "app.internal_error"
    default_message = "An internal error occurred."

    def __init__(
        self,
        message: str | None = None,
        *,
        error_id: str | None = None,
        status: int | None = None,
        detailed_error: str = "",
        headers: dict | None = None,
    ):
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        if error_id:
            self.error_id = error_id
        if status:
            self.status = status
        self.detailed_error = detailed_error
        self.headers = headers or {}


class InvalidInput(AppError):
    status = 400
    error_id = "api.context.invalid_body_param.app_error"
    default_message = "Invalid or missing parameter in request body."


class InvalidParam(AppError):
    status = 400
    error_id = "api.context.invalid_url_param.app_error"
    default_message = "Invalid or missing parameter in URL."


class Unauthorized(AppError):
    status = 401
    error_id = "api.context.session_expired.app_error"
    default_message = "Invalid or expired session, please login again."

    def __init__(self, message: str | None = None, *, token_presented: bool = False, **kw):
        challenge = 'Bearer realm="authflow"'
        if token_presented:
            challenge += ', error="invalid_token"'
        kw.setdefault("headers", {})["WWW-Authenticate"] = challenge
        super().__init__(message, **kw)


class PermissionDenied(AppError):
    status = 403
    error_id = "api.context.permissions.app_error"
    default_message = "You do not have the appropriate permissions."


class NotFound(AppError):
    status = 404
    error_id = "api.context.404.app_error"
    default_message = "Sorry, we could not find the page."


class MethodNotAllowed(AppError):
    status = 405
    error_id = "api.context.405.app_error"
    default_message = "Method not allowed."


class Conflict(AppError):
    status = 409
    error_id = "api.context.conflict.app_error"
    default_message = "The request conflicts with the current state."


class PayloadTooLarge(AppError):
    status = 413
    error_id = "api.context.request_body_too_large.app_error"
    default_message = "The request body is larger than the server accepts."


class UnsupportedMediaType(AppError):
    status = 415
    error_id = "api.context.invalid_body_param.app_error"
    default_message = "The request body must be JSON (Content-Type: application/json)."


class Unprocessable(AppError):
    status = 422


class TooManyRequests(AppError):
    status = 429
    error_id = "api.context.rate_limited.app_error"
    default_message = "Too many failed attempts; try again later."

    def __init__(self, retry_after: int, message: str | None = None, **kw):
        kw.setdefault("headers", {})["Retry-After"] = str(max(1, int(retry_after)))
        self.retry_after = max(1, int(retry_after))
        super().__init__(message, **kw)


class NotImplementedFeature(AppError):
    status = 501
    error_id = "api.context.not_implemented.app_error"
    default_message = "This feature is not available."


class UpstreamError(AppError):
    status = 502
    error_id = "api.context.upstream.app_error"
    default_message = "A remote server could not be reached."


class PageError(AppError):
    """An error shown to a person as an HTML page (authorize, login, consent)."""

    status = 400
    error_id = "web.error"


_HTTP_TO_APP = {
    400: InvalidInput,
    401: Unauthorized,
    403: PermissionDenied,
    404: NotFound,
    405: MethodNotAllowed,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
}


def _kind() -> str:
    path = request.path
    if path == API_PREFIX or path.startswith(API_PREFIX + "/") or path.startswith(PUBLIC_FILES_PREFIX):
        return "api"
    if path.startswith(OAUTH_API_PREFIX) or path.startswith("/.well-known/"):
        return "oauth"
    return "html"


def request_id() -> str:
    return getattr(g, "request_id", "")


def app_error_body(err: AppError) -> dict:
    return {
        "id": err.error_id,
        "message": err.message,
        "detailed_error": err.detailed_error,
        "request_id": request_id(),
        "status_code": err.status,
    }


def render_error(err: AppError):
    """Turn an AppError into the response its route family documents."""
    kind = _kind()
    if kind == "api":
        resp = jsonify(app_error_body(err))
    elif kind == "oauth":
        if err.status >= 500:
            resp = _plain_500()
        else:
            code = "temporarily_unavailable" if err.status == 429 else "invalid_request"
            resp = jsonify({"error": code, "error_description": err.message})
            resp.headers["Cache-Control"] = "no-store"
            resp.headers["Pragma"] = "no-cache"
    else:
        resp = _html_error(err.message, err.status)
    resp.status_code = err.status
    for key, value in err.headers.items():
        resp.headers[key] = value
    return resp


def _plain_500():
    from flask import make_response

    resp = make_response("The server could not complete the request. Try again later.\n", 500)
    resp.mimetype = "text/plain"
    return resp


def _html_error(message: str, status: int):
    from flask import make_response

    return make_response(render_template("error.html", message=message, status=status), status)


def _rollback() -> None:
    from extensions import db

    try:
        db.session.rollback()
    except Exception:  # pragma: no cover - the connection itself may be gone
        log.exception("rollback failed", extra={"request_id": request_id()})


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(AppError)
    def _app_error(err: AppError):
        _rollback()
        return render_error(err)

    @app.errorhandler(ValidationError)
    def _validation_error(err: ValidationError):
        _rollback()
        return render_error(InvalidInput(describe_validation_error(err)))

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException):
        _rollback()
        cls = _HTTP_TO_APP.get(err.code or 500)
        if cls is None:
            app_err = AppError(err.description, status=err.code or 500)
        elif cls is Unauthorized:
            app_err = Unauthorized()
        else:
            app_err = cls()
            if err.code == 400 and err.description:
                app_err.message = str(err.description)
        response = render_error(app_err)
        if err.code == 405 and getattr(err, "valid_methods", None):
            response.headers["Allow"] = ", ".join(err.valid_methods)
        return response

    @app.errorhandler(IntegrityError)
    def _integrity_error(err: IntegrityError):
        _rollback()
        log.info("integrity error: %s", err.orig.__class__.__name__)
        return render_error(Conflict("The object conflicts with one that already exists."))

    @app.errorhandler(DataError)
    def _data_error(err: DataError):
        # The database refused a value the request carried (a NUL byte, a number out of
        # range): bad input, never a server error.
        _rollback()
        log.info("database refused a value: %s", err.orig.__class__.__name__)
        return render_error(InvalidInput("A value in the request cannot be stored or searched for."))

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        _rollback()
        log.error("unhandled error", exc_info=err, extra={"request_id": request_id()})
        return render_error(AppError())


def describe_validation_error(err: ValidationError) -> str:
    """A one-line message naming the offending fields, e.g. 'Invalid name: Too long.'"""
    messages = err.messages
    if isinstance(messages, dict):
        parts = []
        for field, problems in _flatten(messages):
            parts.append(f"{field}: {problems}")
        return "Invalid body parameter " + "; ".join(parts) if parts else "Invalid body."
    return "Invalid body: " + "; ".join(str(m) for m in messages)


def _flatten(messages: dict, prefix: str = ""):
    for key, value in messages.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, name + ".")
        elif isinstance(value, list):
            yield name, " ".join(str(v) for v in value)
        else:
            yield name, str(value)
