"""OAuth client output: never the secret (it is shown once, by the code that made it)."""

from __future__ import annotations

from marshmallow import Schema, fields


class ClientSchema(Schema):
    id = fields.String(dump_only=True)
    client_id = fields.String(dump_only=True)
    name = fields.String(dump_only=True)
    description = fields.String(dump_only=True)
    homepage = fields.String(dump_only=True)
    redirect_uris = fields.List(fields.String(), dump_only=True)
    grant_types = fields.List(fields.String(), dump_only=True)
    confidential = fields.Boolean(dump_only=True)
    trusted = fields.Boolean(dump_only=True)
    creator_id = fields.String(dump_only=True)
    create_at = fields.Integer(dump_only=True)
