"""Files: upload, public link (SPEC 4.10, 8.16), and the public download outside /api/v4."""

from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, Response, jsonify, request

from admin_api import config_store, file_services
from admin_api.auth import current_caller, requires
from admin_api.blueprint import bp
from admin_api.openapi import documented
from extensions import db
from schemas.file import FileInfoSchema, FileLinkSchema, FileUploadResultSchema

_infos = FileInfoSchema(many=True)
# Multipart framing and the small form fields on top of the file bytes themselves.
_MULTIPART_OVERHEAD = 64 * 1024
UPLOAD_FORM = {"type": "object", "required": ["files"], "properties": {
    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
    "channel_id": {"type": "string"},
}}

public_bp = Blueprint("public_files", __name__)


@bp.post("/files")
@documented(body=UPLOAD_FORM, body_type="multipart/form-data", response=FileUploadResultSchema, status=201)
@requires("upload_file")
def upload_files():
    """Upload files (multipart field `files`, optional `channel_id`)."""
    max_size = config_store.get_config()["FileSettings"]["MaxFileSize"]
    request.max_content_length = max_size + _MULTIPART_OVERHEAD  # before the body is read
    uploads = [(f.filename, f.read()) for f in request.files.getlist("files")]
    infos = file_services.upload_files(current_caller().user.id, uploads,
                                       channel_id=request.form.get("channel_id", ""))
    db.session.commit()
    return jsonify({"file_infos": _infos.dump(infos), "client_ids": []}), 201


@bp.get("/files/<file_id>/link")
@documented(response=FileLinkSchema)
def get_file_link(file_id: str):
    """A public link to a file (when public links are enabled)."""
    caller = current_caller()
    link = file_services.public_link(
        file_id,
        caller_id=caller.user.id,
        may_manage=caller.can("manage_system"),
        base_url=config_store.site_url() or request.host_url,
    )
    return jsonify({"link": link})


@public_bp.get("/files/<file_id>/public")
def get_public_file(file_id: str):
    """The bytes of a file behind a public link (no authentication; the hash is the key)."""
    info, data = file_services.open_public_file(file_id, request.args.get("h"))
    disposition = "inline" if file_services.is_inline(info.mime_type) else "attachment"
    resp = Response(data, mimetype=info.mime_type)
    resp.headers["Content-Disposition"] = f"{disposition}; filename*=UTF-8''{quote(info.name)}"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    resp.headers["Cache-Control"] = "private, no-cache"
    return resp
