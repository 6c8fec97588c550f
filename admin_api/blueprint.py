"""The /api/v4 blueprint; each resource module adds its routes to it."""

from __future__ import annotations

from flask import Blueprint

from admin_api.auth import authenticate_request

bp = Blueprint("api", __name__, url_prefix="/api/v4")
bp.before_request(authenticate_request)
