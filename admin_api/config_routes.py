"""/api/v4/config: read, replace and patch the server configuration (SPEC 3.2, 8.7, 8.8)."""

from __future__ import annotations

from flask import jsonify, request
from sqlalchemy.exc import SQLAlchemyError

from admin_api import config_store
from admin_api.auth import current_caller, requires
from admin_api.blueprint import bp
from admin_api.http import json_body
from admin_api.openapi import documented
from extensions import db
from schemas.config import ConfigSchema

# A patch names any sections and fields of the full object; the schema checks each.
CONFIG_PATCH = {"type": "object", "description": "Any subset of the configuration's sections and fields."}


def _masked(doc: dict):
    resp = jsonify(config_store.mask(doc))
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/config")
@documented(response=ConfigSchema)
@requires("manage_system")
def get_config():
    """The effective configuration, secrets masked."""
    return _masked(config_store.get_config())


@bp.put("/config")
@documented(body=ConfigSchema, response=ConfigSchema)
@requires("manage_system")
def put_config():
    """Replace the configuration with a full object; placeholders keep stored secrets."""
    saved = config_store.save_config(json_body(), actor=current_caller().user.id)
    db.session.commit()
    return _masked(saved)


@bp.route("/config/patch", methods=["PATCH", "PUT"])
@documented(body=CONFIG_PATCH, response=ConfigSchema)
@requires("manage_system")
def patch_config():
    """Change only the fields the body names."""
    saved = config_store.patch_config(json_body(), actor=current_caller().user.id)
    db.session.commit()
    return _masked(saved)


@bp.before_request
def _payload_limit():
    """ServiceSettings.MaximumPayloadSizeBytes caps every /api/v4 body (uploads set their own)."""
    try:
        limit = config_store.get_value("ServiceSettings", "MaximumPayloadSizeBytes")
    except SQLAlchemyError:
        # The health ping must still answer when the database is down; keep the process default.
        db.session.rollback()
        return
    request.max_content_length = limit
