"""System bodies (SPEC 4.6, 8.13): the health ping and the server limits. Pure, output only."""

from __future__ import annotations

from marshmallow import Schema, fields


class SystemPingSchema(Schema):
    """GET /system/ping; the *_status fields only with get_server_status=true."""

    status = fields.String(required=True, dump_only=True)
    ActiveSearchBackend = fields.String(dump_only=True)
    AndroidLatestVersion = fields.String(dump_only=True)
    AndroidMinVersion = fields.String(dump_only=True)
    IosLatestVersion = fields.String(dump_only=True)
    IosMinVersion = fields.String(dump_only=True)
    database_status = fields.String(dump_only=True)
    filestore_status = fields.String(dump_only=True)
    root_status = fields.Boolean(dump_only=True)


class ServerLimitsSchema(Schema):
    maxUsersLimit = fields.Integer(required=True, dump_only=True)
    maxUsersHardLimit = fields.Integer(required=True, dump_only=True)
    activeUserCount = fields.Integer(required=True, dump_only=True)
    postHistoryLimit = fields.Integer(required=True, dump_only=True)
    lastAccessiblePostTime = fields.Integer(required=True, dump_only=True)
