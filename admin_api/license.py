"""/api/v4/license: install, remove and show the license (SPEC 3.3, 8.9)."""

from __future__ import annotations

from flask import jsonify, request

from admin_api import license_services
from admin_api.auth import requires
from admin_api.blueprint import bp
from errors import InvalidInput
from extensions import db
from schemas.license import client_view


@bp.post("/license")
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
@requires("manage_system")
def remove_license():
    """Remove the installed license."""
    license_services.remove_license()
    db.session.commit()
    return jsonify({"status": "OK"})


@bp.get("/license/client")
def get_client_license():
    """The license as clients see it (any signed-in user)."""
    return jsonify(client_view(license_services.current_license()))
