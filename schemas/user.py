"""User output (never a password hash) and admin user creation input."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate


class UserSchema(Schema):
    id = fields.String(dump_only=True)
    username = fields.String(dump_only=True)
    email = fields.String(dump_only=True)
    first_name = fields.String(dump_only=True)
    last_name = fields.String(dump_only=True)
    nickname = fields.String(dump_only=True)
    roles = fields.String(dump_only=True)
    auth_service = fields.String(dump_only=True)
    is_bot = fields.Boolean(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    update_at = fields.Integer(dump_only=True)
    delete_at = fields.Integer(dump_only=True)
    last_login_at = fields.Integer(dump_only=True)


class UserCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    username = fields.String(required=True, validate=validate.Length(3, 64))
    email = fields.String(required=True, validate=validate.Length(3, 254))
    password = fields.String(load_only=True, validate=validate.Length(0, 1024), load_default="")
    first_name = fields.String(load_default="", validate=validate.Length(0, 64))
    last_name = fields.String(load_default="", validate=validate.Length(0, 64))
    nickname = fields.String(load_default="", validate=validate.Length(0, 64))
    auth_service = fields.String(load_default="", validate=validate.OneOf(["", "ldap"]))
