"""/api/v4/system, /logs, /limits: health, logs, limits, support packet (SPEC 4.6, 8.13)."""

from __future__ import annotations

from flask import Response, current_app, jsonify, request

from admin_api import system_services
from admin_api.auth import current_caller, public, requires
from admin_api.blueprint import bp
from admin_api.http import bool_arg
from admin_api.openapi import documented, flag
from admin_api.permissions import permissions_for
from oauth.services import resolve_bearer
from schemas.system import ServerLimitsSchema as SERVER_LIMITS
from schemas.system import SystemPingSchema as PING

_PING = {
    "status": "OK",
    "ActiveSearchBackend": "database",
    "AndroidLatestVersion": "",
    "AndroidMinVersion": "",
    "IosLatestVersion": "",
    "IosMinVersion": "",
}


def _caller_may_manage_system() -> bool:
    """The ping needs no token, but an admin's token adds root_status."""
    scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return False
    identity = resolve_bearer(raw.strip())
    return bool(identity and "api" in identity.scopes
                and "manage_system" in permissions_for(identity.user.role_names))


@bp.get("/system/ping")
@documented(response=PING, params=[flag("get_server_status", "Also check the database and the file store."),
                          flag("use_rest_semantics", "Answer 200 even when unhealthy.")],
            extra={500: ("Unhealthy (unless use_rest_semantics).", PING)})
@public
def ping():
    """Liveness; with get_server_status=true a DB round trip and a file store probe."""
    body = dict(_PING)
    healthy, headers = True, {}
    if bool_arg("get_server_status"):
        healthy, fields = system_services.server_status(with_root=_caller_may_manage_system())
        body.update(fields)
        headers = {k: fields[k] for k in ("database_status", "filestore_status")}
    if not healthy:
        body["status"] = system_services.UNHEALTHY
    status = 200 if healthy or bool_arg("use_rest_semantics") else 500
    return jsonify(body), status, headers


@bp.get("/logs/download")
@documented(response_type="text/plain")
@requires("manage_system")
def download_logs():
    """The server log file as a text attachment."""
    data = system_services.log_file_to_download(current_app.instance_path)
    return Response(data, mimetype="text/plain",
                    headers={"Content-Disposition": 'attachment; filename="authflow.log"',
                             "Cache-Control": "no-store"})


@bp.get("/limits/server")
@documented(response=SERVER_LIMITS)
def server_limits():
    """User and post limits; user figures only for admins."""
    return jsonify(system_services.server_limits(is_admin=current_caller().can("manage_system")))


@bp.get("/system/support_packet")
@documented(response_type="application/zip", params=[flag("basic_server_logs", "Include the server log (default true).")])
@requires("manage_system")
def support_packet():
    """A zip of metadata, stats, jobs, diagnostics, masked configuration and logs."""
    name, data = system_services.support_packet(
        requested_by=current_caller().user.id,
        include_logs=bool_arg("basic_server_logs", True),
        instance_path=current_app.instance_path,
    )
    return Response(data, mimetype="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{name}"',
                             "Cache-Control": "no-store"})
