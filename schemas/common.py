"""Bodies every resource shares: the error envelope (SPEC 1.2) and the plain OK. Pure."""

from __future__ import annotations

from marshmallow import Schema, fields


class AppErrorSchema(Schema):
    """Mattermost's AppError: every /api/v4 error body."""

    id = fields.String(required=True, dump_only=True)
    message = fields.String(required=True, dump_only=True)
    detailed_error = fields.String(required=True, dump_only=True)
    request_id = fields.String(required=True, dump_only=True)
    status_code = fields.Integer(required=True, dump_only=True)


class StatusOKSchema(Schema):
    status = fields.String(required=True, dump_only=True)
