"""Jobs in and out (SPEC 4.5)."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

STATUSES = ["pending", "in_progress", "success", "error", "cancel_requested", "canceled", "warning"]


class JobSchema(Schema):
    id = fields.String(dump_only=True)
    type = fields.String(dump_only=True)
    priority = fields.Integer(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    start_at = fields.Integer(dump_only=True)
    last_activity_at = fields.Integer(dump_only=True)
    status = fields.String(dump_only=True)
    progress = fields.Integer(dump_only=True)
    data = fields.Dict(keys=fields.String(), values=fields.String(), dump_only=True)


class JobCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    type = fields.String(required=True, validate=validate.Length(1, 64))
    data = fields.Dict(keys=fields.String(), load_default=dict)


class JobStatusSchema(Schema):
    class Meta:
        unknown = RAISE

    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    force = fields.Boolean(load_default=False)
