"""Teams (SPEC 4.3): output, and the input of POST /api/v4/teams."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate


class TeamSchema(Schema):
    id = fields.String(dump_only=True)
    name = fields.String(dump_only=True)
    display_name = fields.String(dump_only=True)
    type = fields.String(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    update_at = fields.Integer(dump_only=True)
    delete_at = fields.Integer(dump_only=True)


class TeamCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True)
    display_name = fields.String(required=True, validate=validate.Length(1, 64))
    type = fields.String(load_default="O", validate=validate.OneOf(["O", "I"]))
