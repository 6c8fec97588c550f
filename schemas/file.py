"""File info output (SPEC 4.10). Pure."""

from __future__ import annotations

from marshmallow import Schema, fields


class FileInfoSchema(Schema):
    id = fields.String(dump_only=True)
    creator_id = fields.String(dump_only=True)
    channel_id = fields.String(dump_only=True)
    name = fields.String(dump_only=True)
    extension = fields.String(dump_only=True)
    size = fields.Integer(dump_only=True)
    mime_type = fields.String(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    update_at = fields.Integer(dump_only=True)
    delete_at = fields.Integer(dump_only=True)


class FileUploadResultSchema(Schema):
    file_infos = fields.List(fields.Nested(FileInfoSchema), required=True, dump_only=True)
    client_ids = fields.List(fields.String(), required=True, dump_only=True)


class FileLinkSchema(Schema):
    link = fields.String(required=True, dump_only=True)
