"""POST /api/v4/file/test and the legacy /api/v4/file/s3_test (SPEC 6, 8.18).

The rules, in order: permission (before the body is read), no body → the running
configuration, a body must carry every FileSettings field, the driver and its required
fields, placeholders → running secrets, then a real write/read/delete probe. Nothing of a
sent configuration is stored.
"""

from __future__ import annotations

from flask import jsonify
from marshmallow import ValidationError

import storage_probe
from admin_api import config_store, file_store
from admin_api.auth import requires
from admin_api.blueprint import bp
from admin_api.http import json_body
from admin_api.openapi import documented
from errors import InvalidInput, describe_validation_error
from schemas.common import StatusOKSchema
from schemas.config import SECTIONS, file_settings_schema
from storage_probe import StorageConfigError

SETTINGS_NIL_ID = "api.file.test_connection_settings_nil.app_error"
_FILE_FIELDS = tuple(SECTIONS["FileSettings"])
# A configuration object; only its FileSettings section (every field) is read.
FILE_TEST_BODY = {"type": "object", "required": ["FileSettings"], "properties": {"FileSettings": {"type": "object"}}}


def settings_to_test(body: object, running: dict) -> dict:
    """The FileSettings section to probe: the running one for no body, else the sent one
    with placeholders resolved. Raises InvalidInput (400) with SPEC 6's ids.
    """
    if body is None:
        return running["FileSettings"]
    if not isinstance(body, dict):
        raise InvalidInput("The body must be a configuration object.")
    section = body.get("FileSettings")
    if section is None:
        raise InvalidInput("The configuration has no FileSettings section.", error_id=SETTINGS_NIL_ID)
    if not isinstance(section, dict):
        raise InvalidInput("FileSettings must be an object.")
    missing = [name for name in _FILE_FIELDS if name not in section]
    if missing:
        raise InvalidInput(
            "FileSettings is missing: " + ", ".join(f"FileSettings.{name}" for name in missing) + ".",
            error_id=SETTINGS_NIL_ID,
        )
    # Fields this server does not know (a Mattermost client sends many) play no part.
    known = {name: section[name] for name in _FILE_FIELDS}
    try:
        storage_probe.validate_file_settings(known)
    except StorageConfigError as err:
        raise file_store.config_error(err) from err
    try:
        file_settings_schema().load(known)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(ValidationError({"FileSettings": exc.messages}))) from exc
    return config_store.unmask({"FileSettings": known}, running)["FileSettings"]


def check_file_settings(body: object) -> None:
    """Probe the file store `body` describes (SPEC 6). Raises InvalidInput for bad settings,
    StorageFailure (500, specific id) when the backend fails the write/read/delete probe.
    """
    settings = settings_to_test(body, config_store.get_config())
    try:
        result = file_store.probe_settings(settings)
    except StorageConfigError as err:  # the running configuration names no usable backend
        raise file_store.config_error(err) from err
    if not result.ok:
        raise file_store.StorageFailure(result.message, error_id=result.error_id)


@bp.post("/file/test")
@bp.post("/file/s3_test")
@documented(body=FILE_TEST_BODY, body_required=False, response=StatusOKSchema,
            extra={500: ("The storage backend failed the write/read/delete probe.", None)})
@requires("sysconsole_write_environment_file_storage")
def file_connection_test():
    """Test a file storage configuration (the running one when no body is sent)."""
    check_file_settings(json_body(allow_empty=True))
    return jsonify({"status": "OK"})
