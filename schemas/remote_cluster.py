"""Remote clusters (SPEC 5): the sanitized record and the bodies of every route.

Field rules that need the database or configuration (team exists, SiteURL set, name
format) live in admin_api.remote_cluster_services; these schemas check shape and types, so
that a malformed body is 400 before the SiteURL check (422), as SPEC 5 orders them.
"""

from __future__ import annotations

from marshmallow import EXCLUDE, RAISE, Schema, fields, validate

from utils import now_ms

_ID = validate.Length(equal=26)


class RemoteClusterSchema(Schema):
    """The record as every response shows it: both tokens blanked, `online` derived."""

    remote_id = fields.String(dump_only=True)
    name = fields.String(dump_only=True)
    display_name = fields.String(dump_only=True)
    site_url = fields.String(dump_only=True)
    default_team_id = fields.String(dump_only=True)
    create_at = fields.Integer(dump_only=True)
    delete_at = fields.Integer(dump_only=True)
    last_ping_at = fields.Integer(dump_only=True)
    topics = fields.Function(lambda rc: (rc.topics or "").strip(), dump_only=True)
    creator_id = fields.String(dump_only=True)
    plugin_id = fields.String(dump_only=True)
    options = fields.Integer(dump_only=True)
    token = fields.Constant("", dump_only=True)
    remote_token = fields.Constant("", dump_only=True)
    online = fields.Function(lambda rc: rc.is_online(now_ms()), dump_only=True)


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class RemoteClusterCreateSchema(_Strict):
    name = fields.String(required=True)
    display_name = fields.String(load_default="")
    default_team_id = fields.String(required=True)
    password = fields.String(load_default="", load_only=True, validate=validate.Length(0, 256))


class GenerateInviteSchema(_Strict):
    password = fields.String(required=True, load_only=True, validate=validate.Length(1, 256))


class AcceptInviteSchema(_Strict):
    name = fields.String(required=True)
    display_name = fields.String(load_default="")
    default_team_id = fields.String(required=True)
    invite = fields.String(required=True, load_only=True)
    password = fields.String(required=True, load_only=True, validate=validate.Length(1, 256))


class RemoteClusterPatchSchema(_Strict):
    display_name = fields.String(validate=validate.Length(1, 64))
    default_team_id = fields.String()


class _Lenient(Schema):
    # Server-to-server bodies ignore unknown fields: the other side may be newer.
    class Meta:
        unknown = EXCLUDE


class InvitationPayloadSchema(_Lenient):
    """What the accepting server tells the inviter (SPEC 5 handshake)."""

    remote_id = fields.String(required=True, validate=_ID)
    site_url = fields.String(required=True, validate=validate.Length(1, 512))
    token = fields.String(required=True, validate=validate.Length(16, 512))
    refreshed_token = fields.String(required=True, validate=validate.Length(16, 512))
    version = fields.Integer(load_default=3)


class InvitationMessageSchema(_Lenient):
    id = fields.String(load_default="")
    topic = fields.String(required=True, validate=validate.Equal("invitation"))
    create_at = fields.Integer(load_default=0)
    payload = fields.Nested(InvitationPayloadSchema, required=True)


class ConfirmInviteSchema(_Lenient):
    remote_id = fields.String(required=True, validate=_ID)
    msg = fields.Nested(InvitationMessageSchema, required=True)


class PingSchema(_Lenient):
    sent_at = fields.Integer(required=True, strict=True)


class RemoteClusterCreatedSchema(Schema):
    """POST /remotecluster: the record, its invite, and the password when one was generated."""

    remote_cluster = fields.Nested(RemoteClusterSchema, required=True, dump_only=True)
    invite = fields.String(required=True, dump_only=True)
    password = fields.String(dump_only=True)


class PingAnswerSchema(Schema):
    sent_at = fields.Integer(required=True, dump_only=True)
    recv_at = fields.Integer(required=True, dump_only=True)
