"""/api/v4/remotecluster: secure connections to other authflow servers (SPEC 5).

Check order, observable: permission (403) → service enabled (501) → body (400) →
SiteURL set (422) → field rules. The server-to-server routes (confirm_invite, ping)
take no Bearer token: they authenticate with the X-RemoteCluster-* headers.
"""

from __future__ import annotations

from functools import wraps

from flask import jsonify, request

from admin_api import remote_cluster_services as services
from admin_api.auth import current_caller, public, require_any, requires
from admin_api.blueprint import bp
from admin_api.http import bool_arg, load_body, paging
from admin_api.openapi import PAGING, Param, documented, flag
from extensions import db
from schemas.common import StatusOKSchema
from schemas.remote_cluster import (
    AcceptInviteSchema,
    ConfirmInviteSchema,
    GenerateInviteSchema,
    PingAnswerSchema,
    PingSchema,
    RemoteClusterCreatedSchema,
    RemoteClusterCreateSchema,
    RemoteClusterPatchSchema,
    RemoteClusterSchema,
)

MANAGE = "manage_secure_connections"
_rc = RemoteClusterSchema()
_rcs = RemoteClusterSchema(many=True)
DISABLED = {501: ("EnableRemoteClusterService is off.", None)}
LIST_PARAMS = [
    *PAGING,
    flag("exclude_offline", "Only remotes seen recently."),
    flag("only_confirmed", "Only confirmed remotes."),
    Param("creator_id", {"type": "string"}, "Only remotes this user created."),
    Param("topic", {"type": "string"}, "Only remotes subscribed to this topic."),
    flag("only_plugins", "Only plugin remotes."),
    flag("exclude_plugins", "No plugin remotes."),
    flag("include_deleted", "Deleted remotes too."),
]
REMOTE_HEADERS = [
    Param(services.REMOTE_ID_HEADER, {"type": "string"}, "The calling remote's id.", location="header", required=True),
    Param(services.REMOTE_TOKEN_HEADER, {"type": "string"}, "The calling remote's token.", location="header", required=True),
]


def enabled(view):
    """501 when EnableRemoteClusterService is off (after the permission, before the body)."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        services.ensure_service_enabled()
        return view(*args, **kwargs)

    return wrapped


def readable(view):
    """GET routes also accept `manage_shared_channels` (SPEC 5)."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        require_any(MANAGE, "manage_shared_channels")
        return view(*args, **kwargs)

    return wrapped


@bp.get("/remotecluster")
@documented(response=RemoteClusterSchema, many=True, params=LIST_PARAMS, extra=DISABLED)
@readable
@enabled
def list_remote_clusters():
    """Remote clusters, sorted by display_name then name, filtered and paged."""
    page, per_page = paging()
    filters = services.RemoteClusterFilter(
        exclude_offline=bool_arg("exclude_offline"),
        only_confirmed=bool_arg("only_confirmed"),
        creator_id=request.args.get("creator_id", ""),
        topic=request.args.get("topic", ""),
        only_plugins=bool_arg("only_plugins"),
        exclude_plugins=bool_arg("exclude_plugins"),
        include_deleted=bool_arg("include_deleted"),
    )
    rows = services.list_remote_clusters(filters, offset=page * per_page, limit=per_page)
    return jsonify(_rcs.dump(rows))


@bp.post("/remotecluster")
@documented(body=RemoteClusterCreateSchema, response=RemoteClusterCreatedSchema, status=201, extra=DISABLED)
@requires(MANAGE)
@enabled
def create_remote_cluster():
    """Create a pending remote cluster and its invite."""
    data = load_body(RemoteClusterCreateSchema())
    rc, invite, generated = services.create_remote_cluster(**data, creator_id=current_caller().user.id)
    body = {"remote_cluster": _rc.dump(rc), "invite": invite}
    if generated:
        body["password"] = generated
    db.session.commit()
    return jsonify(body), 201


@bp.post("/remotecluster/<remote_id>/generate_invite")
@documented(body=GenerateInviteSchema, response={"type": "string"}, status=201, extra=DISABLED)
@requires(MANAGE)
@enabled
def generate_invite(remote_id: str):
    """A new invite for a pending remote cluster (earlier invites stop working)."""
    data = load_body(GenerateInviteSchema())
    invite = services.generate_invite(remote_id, data["password"])
    db.session.commit()
    return jsonify(invite), 201


@bp.post("/remotecluster/accept_invite")
@documented(body=AcceptInviteSchema, response=RemoteClusterSchema, status=201, extra=DISABLED)
@requires(MANAGE)
@enabled
def accept_invite():
    """Accept another server's invite; the inviter confirms it before anything is saved."""
    data = load_body(AcceptInviteSchema())
    rc = services.accept_invite(**data, creator_id=current_caller().user.id)
    db.session.commit()
    return jsonify(_rc.dump(rc)), 201


@bp.get("/remotecluster/<remote_id>")
@documented(response=RemoteClusterSchema, extra=DISABLED)
@readable
@enabled
def get_remote_cluster(remote_id: str):
    """One remote cluster, deleted ones included."""
    return jsonify(_rc.dump(services.get_remote_cluster(remote_id)))


@bp.patch("/remotecluster/<remote_id>")
@documented(body=RemoteClusterPatchSchema, response=RemoteClusterSchema, extra=DISABLED)
@requires(MANAGE)
@enabled
def patch_remote_cluster(remote_id: str):
    """Change a remote cluster's display_name or default_team_id."""
    changes = load_body(RemoteClusterPatchSchema())
    rc = services.patch_remote_cluster(remote_id, changes)
    db.session.commit()
    return jsonify(_rc.dump(rc))


@bp.delete("/remotecluster/<remote_id>")
@documented(response=StatusOKSchema, extra=DISABLED)
@requires(MANAGE)
@enabled
def delete_remote_cluster(remote_id: str):
    """Soft-delete a remote cluster; it can no longer authenticate."""
    services.delete_remote_cluster(remote_id)
    db.session.commit()
    return jsonify({"status": "OK"})


# --- server-to-server (X-RemoteCluster-* headers, no Bearer token) ----------------------


def _remote():
    return services.authenticate_remote(
        request.headers.get(services.REMOTE_ID_HEADER), request.headers.get(services.REMOTE_TOKEN_HEADER)
    )


@bp.post("/remotecluster/confirm_invite")
@documented(body=ConfirmInviteSchema, response=StatusOKSchema, params=REMOTE_HEADERS, extra=DISABLED)
@public
@enabled
def confirm_invite():
    """The accepting server confirms our invite (its token works once)."""
    rc = _remote()
    body = load_body(ConfirmInviteSchema())
    services.confirm_invite(rc, request.headers.get(services.REMOTE_TOKEN_HEADER, ""), body)
    db.session.commit()
    return jsonify({"status": "OK"})


@bp.post("/remotecluster/ping")
@documented(body=PingSchema, response=PingAnswerSchema, params=REMOTE_HEADERS, extra=DISABLED)
@public
@enabled
def remote_ping():
    """Keep-alive from a confirmed remote: answers {sent_at, recv_at}."""
    rc = _remote()
    data = load_body(PingSchema())
    answer = services.receive_ping(rc, data["sent_at"])
    db.session.commit()
    return jsonify(answer)
