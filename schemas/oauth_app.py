"""OAuth apps over REST, in Mattermost's OAuthApp shape (SPEC 2.1); `id` is the client_id."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"]


class OAuthAppInSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(1, 64))
    description = fields.String(load_default="", validate=validate.Length(0, 512))
    callback_urls = fields.List(fields.String(validate=validate.Length(1, 1024)), required=True,
                                validate=validate.Length(1, 10))
    homepage = fields.String(load_default="", validate=validate.Length(0, 1024))
    icon_url = fields.String(load_default="", validate=validate.Length(0, 1024))
    is_trusted = fields.Boolean(load_default=False)
    is_public = fields.Boolean(load_default=False)
    grant_types = fields.List(fields.String(validate=validate.OneOf(GRANT_TYPES)), load_default=None)


class OAuthAppUpdateSchema(OAuthAppInSchema):
    """PUT: the same fields; `id` may be echoed back and must match the path."""

    id = fields.String(load_default=None)
    client_secret = fields.String(load_default=None, load_only=True)
    creator_id = fields.String(load_default=None, load_only=True)
    create_at = fields.Integer(load_default=None, load_only=True)
    update_at = fields.Integer(load_default=None, load_only=True)


class OAuthAppOutSchema(Schema):
    id = fields.String(attribute="client_id", dump_only=True)
    client_secret = fields.Method("secret_out", dump_only=True)
    name = fields.String(dump_only=True)
    description = fields.String(dump_only=True)
    icon_url = fields.String(dump_only=True)
    callback_urls = fields.List(fields.String(), attribute="redirect_uris", dump_only=True)
    homepage = fields.String(dump_only=True)
    is_trusted = fields.Boolean(attribute="trusted", dump_only=True)
    is_public = fields.Method("public_out", dump_only=True)
    grant_types = fields.List(fields.String(), dump_only=True)
    creator_id = fields.String(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    update_at = fields.Integer(dump_only=True)

    def secret_out(self, obj) -> str:
        # The secret exists in clear only in the response that created or rotated it.
        return self.context_secret or ""

    def public_out(self, obj) -> bool:
        return not obj.confidential

    def __init__(self, *args, secret: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.context_secret = secret

