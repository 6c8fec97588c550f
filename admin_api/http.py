"""Request helpers shared by every /api/v4 view: JSON bodies and paging (SPEC 1.2, 1.4)."""

from __future__ import annotations

import json

from flask import request
from marshmallow import Schema

from errors import InvalidInput, InvalidParam, UnsupportedMediaType

MAX_PER_PAGE = 200
DEFAULT_PER_PAGE = 60


def json_body(*, allow_empty: bool = False):
    """The parsed JSON body. 415 when it is not declared JSON, 400 when it does not parse."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if allow_empty:
            return None
        raise InvalidInput("The request body is empty; a JSON body is required.")
    if not request.is_json:
        raise UnsupportedMediaType()
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput("The request body is not valid JSON.") from exc


def load_body(schema: Schema, *, partial: bool = False):
    """Parse the JSON body with a marshmallow schema (errors become 400 in errors.py)."""
    data = json_body()
    if not isinstance(data, dict):
        raise InvalidInput("The request body must be a JSON object.")
    return schema.load(data, partial=partial)


def int_arg(name: str, default: int, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise InvalidParam(f"{name} must be an integer.") from exc
    if minimum is not None and value < minimum:
        raise InvalidParam(f"{name} must be at least {minimum}.")
    if maximum is not None and value > maximum:
        raise InvalidParam(f"{name} must be at most {maximum}.")
    return value


def bool_arg(name: str, default: bool = False) -> bool:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    value = raw.lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise InvalidParam(f"{name} must be true or false.")


def paging() -> tuple[int, int]:
    """(page, per_page): 0-based page; per_page defaults to 60 and is clamped to 200."""
    page = int_arg("page", 0)
    per_page = int_arg("per_page", DEFAULT_PER_PAGE)
    return page, min(per_page, MAX_PER_PAGE)
