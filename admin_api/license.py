"""/api/v4/license: install, remove and show the license (SPEC 3.3, 8.9)."""

from __future__ import annotations

from flask import jsonify, request

from admin_api import license_services
from admin_api.auth import requires
from admin_api.blueprint import bp
from admin_api.openapi import documented
from errors import InvalidInput
from extensions import db
from schemas.common import StatusOKSchema
from schemas.license import client_view

LICENSE_UPLOAD = {"type": "object", "required": ["license"],
                  "properties": {"license": {"type": "string", "format": "binary"}}}
# Mattermost's client license: every value a string; only IsLicensed without a license.
CLIENT_LICENSE = {"type": "object", "required": ["IsLicensed"], "additionalProperties": {"type": "string"}}


@bp.post("/license")
@documented(body=LICENSE_UPLOAD, body_type="multipart/form-data", response=CLIENT_LICENSE, status=201)
@requires("manage_system")
def add_license():
    """Install a license file (multipart field `license`)."""
    upload = request.files.get("license")
    if upload is None:
        raise InvalidInput("A license file is required (multipart field 'license').",
                           error_id=license_services.NO_FILE_ID)
    doc = license_services.install_license(upload.read(license_services.MAX_LICENSE_BYTES + 1))
    db.session.commit()
    return jsonify(client_view(doc)), 201


@bp.delete("/license")
@documented(response=StatusOKSchema)
@requires("manage_system")
def remove_license():
    """Remove the installed license."""
    license_services.remove_license()
    db.session.commit()
    return jsonify({"status": "OK"})


@bp.get("/license/client")
@documented(response=CLIENT_LICENSE)
def get_client_license():
    """The license as clients see it (any signed-in user)."""
    return jsonify(client_view(license_services.current_license()))
