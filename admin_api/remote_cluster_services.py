"""Remote clusters: secure connections between two authflow servers (SPEC 5, 8.17).

Plain functions on plain values; they raise typed errors and never read flask.request.
They flush; the request (or the CLI) commits once. Two rules shape the code:
- every "exactly once" (confirming an invite, deleting) is a conditional UPDATE whose row
  count decides, so two concurrent requests cannot both win;
- no database transaction is held across an outgoing call (on SQLite it would hold the
  write lock for up to the 15 s timeout), so calls happen between short transactions.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import socket
import string
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

import requests
from flask import current_app
from sqlalchemy import select, update

from admin_api import config_store, invites, team_services
from admin_api.models import ONLINE_WINDOW_MS, PENDING_SITE_URL_PREFIX, RemoteCluster
from admin_api.secret_box import SealedSecretError, seal, unseal
from errors import (
    Conflict,
    InvalidInput,
    InvalidParam,
    NotFound,
    NotImplementedFeature,
    Unauthorized,
    Unprocessable,
    UpstreamError,
)
from extensions import db
from utils import hash_secret, is_id, new_id, new_secret, now_ms, secret_matches

NAME_RE = re.compile(r"^[a-zA-Z0-9._-]{1,64}$")
TOPIC_RE = re.compile(r"^[a-zA-Z0-9._-]{1,64}$")
INVITE_EXPIRES_MS = 48 * 3600 * 1000
REMOTE_TIMEOUT_SECONDS = 15.0
GENERATED_PASSWORD_LENGTH = 16
_PASSWORD_ALPHABET = string.ascii_letters + string.digits
_SEAL_PURPOSE = "remote_cluster.remote_token"

REMOTE_ID_HEADER = "X-RemoteCluster-Id"
REMOTE_TOKEN_HEADER = "X-RemoteCluster-Token"


# --- configuration (the only two places that read it) -----------------------------------


def configured_site_url() -> str:
    """`ServiceSettings.SiteURL`; "" when not set."""
    return config_store.site_url()


def service_enabled() -> bool:
    """`ConnectedWorkspacesSettings.EnableRemoteClusterService` (default true)."""
    return bool(config_store.get_value("ConnectedWorkspacesSettings", "EnableRemoteClusterService"))


def ensure_service_enabled() -> None:
    """Raises NotImplementedFeature (501) when the remote cluster service is off."""
    if not service_enabled():
        raise NotImplementedFeature(
            "The remote cluster service is not enabled.",
            error_id="api.remote_cluster.service_not_enabled.app_error",
        )


def require_site_url() -> str:
    """Our own SiteURL. Raises Unprocessable (422) when it is not set."""
    url = configured_site_url()
    if not url:
        raise Unprocessable(
            "ServiceSettings.SiteURL must be set before remote clusters can be used.",
            error_id="api.get_site_url_error",
        )
    return url


# --- field rules ------------------------------------------------------------------------


def _valid_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise InvalidInput("Invalid body parameter name: 1-64 characters of a-z, A-Z, 0-9, '.', '_' or '-'.")
    return name.lower()


def _valid_display_name(display_name: str, default: str) -> str:
    display_name = (display_name or "").strip() or default
    if len(display_name) > 64:
        raise InvalidInput("Invalid body parameter display_name: at most 64 characters.")
    return display_name


def _valid_team(team_id: str) -> str:
    if not team_services.team_exists(team_id):
        raise InvalidInput("Invalid body parameter default_team_id: no such team.")
    return team_id


def _not_found() -> NotFound:
    return NotFound("Remote cluster not found.", error_id="app.remote_cluster.get.not_found.app_error")


def _sealed(remote_id: str, token: str) -> str:
    # Bound to the row: a sealed token copied to another remote's row does not open.
    return seal(token, purpose=_SEAL_PURPOSE, context=remote_id)


def _unsealed(rc_id: str, blob: str) -> str:
    return unseal(blob, purpose=_SEAL_PURPOSE, context=rc_id)


def generate_password() -> str:
    return "".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(GENERATED_PASSWORD_LENGTH))


# --- management -------------------------------------------------------------------------


@dataclass(frozen=True)
class RemoteClusterFilter:
    exclude_offline: bool = False
    only_confirmed: bool = False
    creator_id: str = ""
    topic: str = ""
    only_plugins: bool = False
    exclude_plugins: bool = False
    include_deleted: bool = False


def list_remote_clusters(filters: RemoteClusterFilter, *, offset: int, limit: int) -> list[RemoteCluster]:
    """Remote clusters by display_name then name. Raises InvalidParam for contradictory filters."""
    if filters.only_plugins and filters.exclude_plugins:
        raise InvalidParam("only_plugins and exclude_plugins cannot both be true.")
    query = select(RemoteCluster)
    if not filters.include_deleted:
        query = query.where(RemoteCluster.delete_at == 0)
    if filters.only_confirmed:
        query = query.where(~RemoteCluster.site_url.startswith(PENDING_SITE_URL_PREFIX, autoescape=True))
    if filters.exclude_offline:
        query = query.where(RemoteCluster.last_ping_at > now_ms() - ONLINE_WINDOW_MS)
    if filters.creator_id:
        query = query.where(RemoteCluster.creator_id == filters.creator_id)
    if filters.topic:
        if not TOPIC_RE.match(filters.topic):
            raise InvalidParam("topic must be 1-64 characters of a-z, A-Z, 0-9, '.', '_' or '-'.")
        query = query.where(RemoteCluster.topics.contains(f" {filters.topic} ", autoescape=True))
    if filters.only_plugins:
        query = query.where(RemoteCluster.plugin_id != "")
    if filters.exclude_plugins:
        query = query.where(RemoteCluster.plugin_id == "")
    query = query.order_by(RemoteCluster.display_name, RemoteCluster.name, RemoteCluster.remote_id)
    return list(db.session.scalars(query.offset(offset).limit(limit)))


def get_remote_cluster(remote_id: str, *, include_deleted: bool = True) -> RemoteCluster:
    """One remote cluster (deleted ones too unless told otherwise). Raises NotFound."""
    rc = db.session.get(RemoteCluster, remote_id) if is_id(remote_id) else None
    if rc is None or (rc.delete_at and not include_deleted):
        raise _not_found()
    return rc


def _invite_for(remote_id: str, site_url: str, password: str) -> tuple[str, str]:
    """(invite code, token hash): a fresh invite token, only its hash is kept."""
    token = new_secret()
    code = invites.encrypt_invite(
        {"remote_id": remote_id, "site_url": site_url, "token": token, "version": invites.INVITE_VERSION},
        password,
    )
    return code, hash_secret(token)


def create_remote_cluster(
    *, name: str, display_name: str, default_team_id: str, password: str, creator_id: str
) -> tuple[RemoteCluster, str, str | None]:
    """A pending remote and its invite: (record, invite, generated password or None).

    Raises Unprocessable (SiteURL unset) or InvalidInput (name, display_name, team).
    """
    site_url = require_site_url()
    name = _valid_name(name)
    display_name = _valid_display_name(display_name, name)
    _valid_team(default_team_id)
    generated = None
    if not password:
        password = generated = generate_password()
    remote_id = new_id()
    code, token_hash = _invite_for(remote_id, site_url, password)
    rc = RemoteCluster(
        remote_id=remote_id,
        name=name,
        display_name=display_name,
        site_url=PENDING_SITE_URL_PREFIX + new_id(),
        default_team_id=default_team_id,
        creator_id=creator_id,
        token_hash=token_hash,
    )
    db.session.add(rc)
    db.session.flush()
    return rc, code, generated


def generate_invite(remote_id: str, password: str) -> str:
    """A new invite for a pending remote. It carries a fresh token (we keep only hashes), so
    earlier invites for this remote stop working. Raises Unprocessable, NotFound, InvalidInput.
    """
    site_url = require_site_url()
    rc = get_remote_cluster(remote_id, include_deleted=False)
    if rc.is_confirmed:
        raise InvalidInput(
            "This remote cluster is already confirmed; it needs no invite.",
            error_id="api.remote_cluster.already_confirmed.app_error",
        )
    code, token_hash = _invite_for(rc.remote_id, site_url, password)
    rows = db.session.execute(
        update(RemoteCluster)
        .where(
            RemoteCluster.remote_id == rc.remote_id,
            RemoteCluster.delete_at == 0,
            RemoteCluster.site_url.startswith(PENDING_SITE_URL_PREFIX, autoescape=True),
        )
        .values(token_hash=token_hash)
        .execution_options(synchronize_session=False)
    ).rowcount
    if rows != 1:  # deleted or confirmed meanwhile
        raise _not_found()
    return code


def patch_remote_cluster(remote_id: str, changes: dict) -> RemoteCluster:
    """Change display_name and/or default_team_id. Raises NotFound or InvalidInput."""
    rc = get_remote_cluster(remote_id, include_deleted=False)
    if "default_team_id" in changes:
        rc.default_team_id = _valid_team(changes["default_team_id"])
    if "display_name" in changes:
        rc.display_name = _valid_display_name(changes["display_name"], rc.name)
    db.session.flush()
    return rc


def delete_remote_cluster(remote_id: str) -> None:
    """Soft delete: the remote can no longer authenticate. Raises NotFound."""
    if not is_id(remote_id):
        raise _not_found()
    rows = db.session.execute(
        update(RemoteCluster)
        .where(RemoteCluster.remote_id == remote_id, RemoteCluster.delete_at == 0)
        .values(delete_at=now_ms())
        .execution_options(synchronize_session=False)
    ).rowcount
    if rows != 1:
        raise _not_found()


# --- outgoing calls ---------------------------------------------------------------------


class RemoteCallFailed(Exception):
    """An outgoing call did not get a usable answer; str() says why (no secrets)."""

    def __init__(self, reason: str, status: int | None = None, error_id: str = ""):
        super().__init__(reason)
        self.status = status
        self.error_id = error_id


def guard_remote_url(url: str) -> None:
    """SSRF guard: http(s) only, and the host must resolve to public addresses only, unless
    ALLOW_PRIVATE_REMOTES (AUTHFLOW_ALLOW_PRIVATE_REMOTES) is set. Raises RemoteCallFailed.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteCallFailed(f"site URL {url!r} is not an http(s) URL")
    if current_app.config.get("ALLOW_PRIVATE_REMOTES"):
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError) as exc:
        raise RemoteCallFailed(f"cannot resolve {parts.hostname!r}") from exc
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        if not ip.is_global or ip.is_multicast:
            raise RemoteCallFailed(
                f"{parts.hostname!r} resolves to a non-public address ({ip}); refused "
                "(set AUTHFLOW_ALLOW_PRIVATE_REMOTES to allow)"
            )


def _post_remote(site_url: str, path: str, *, remote_id: str, token: str, body: dict,
                 timeout: float) -> dict:
    """POST JSON to a remote's route; its JSON answer when 200. Raises RemoteCallFailed."""
    url = site_url.rstrip("/") + "/api/v4/remotecluster/" + path
    guard_remote_url(url)
    try:
        resp = requests.post(
            url,
            json=body,
            headers={REMOTE_ID_HEADER: remote_id, REMOTE_TOKEN_HEADER: token},
            timeout=timeout,
            # A redirect could lead the call past the guard to a private address.
            allow_redirects=False,
        )
    except requests.Timeout as exc:
        raise RemoteCallFailed(f"{site_url} did not answer within {timeout:g} s") from exc
    except requests.RequestException as exc:
        raise RemoteCallFailed(f"{site_url} could not be reached ({type(exc).__name__})") from exc
    try:
        data = resp.json()
    except ValueError:
        data = None
    if resp.status_code != 200:
        error_id = data.get("id", "") if isinstance(data, dict) else ""
        raise RemoteCallFailed(
            f"{site_url} answered {resp.status_code}" + (f" ({error_id})" if error_id else ""),
            status=resp.status_code,
            error_id=error_id,
        )
    if not isinstance(data, dict):
        raise RemoteCallFailed(f"{site_url} answered 200 without a JSON object", status=200)
    return data


def _end_transaction() -> None:
    # Nothing is written yet; ending the read transaction releases SQLite's lock before
    # an outgoing call that may take up to the timeout.
    db.session.rollback()


# --- the handshake ----------------------------------------------------------------------


def accept_invite(
    *, name: str, display_name: str, default_team_id: str, invite: str, password: str,
    creator_id: str, timeout: float = REMOTE_TIMEOUT_SECONDS,
) -> RemoteCluster:
    """Accept another server's invite: confirm it with the inviter, then save the remote.

    Nothing is written unless the inviter confirmed, so a failed accept leaves nothing
    behind. Raises Unprocessable (SiteURL unset), InvalidInput (name, team, invite,
    password), Conflict (remote already known) or UpstreamError (the inviter said no or
    could not be reached).
    """
    our_url = require_site_url()
    name = _valid_name(name)
    display_name = _valid_display_name(display_name, name)
    _valid_team(default_team_id)
    data = _open_invite(invite, password)
    remote_id, inviter_url, invite_token = data["remote_id"], data["site_url"], data["token"]
    if db.session.get(RemoteCluster, remote_id) is not None:
        raise Conflict(
            "This server already has a remote cluster with the invite's remote_id.",
            error_id="api.remote_cluster.already_exists.app_error",
        )
    token_for_us, token_for_them = new_secret(), new_secret()
    now = now_ms()
    message = {
        "remote_id": remote_id,
        "msg": {
            "id": new_id(),
            "topic": "invitation",
            "create_at": now,
            "payload": {
                "remote_id": remote_id,
                "site_url": our_url,
                "token": token_for_us,
                "refreshed_token": token_for_them,
                "version": invites.INVITE_VERSION,
            },
        },
    }
    _end_transaction()
    try:
        _post_remote(inviter_url, "confirm_invite", remote_id=remote_id, token=invite_token,
                     body=message, timeout=timeout)
    except RemoteCallFailed as exc:
        raise UpstreamError(
            f"The inviting server did not confirm the invitation: {exc}.",
            error_id="api.remote_cluster.accept_invitation_error",
        ) from exc
    rc = RemoteCluster(
        remote_id=remote_id,
        name=name,
        display_name=display_name,
        site_url=inviter_url,
        default_team_id=default_team_id,
        creator_id=creator_id,
        create_at=now,
        token_hash=hash_secret(token_for_us),
        remote_token_sealed=_sealed(remote_id, token_for_them),
    )
    db.session.add(rc)
    db.session.flush()
    return rc


def _open_invite(code: str, password: str) -> dict:
    try:
        data = invites.decrypt_invite(code, password)
    except invites.InviteDecodeError as exc:
        raise InvalidInput(f"Invalid body parameter invite: {exc}.",
                           error_id="api.remote_cluster.base64_decode_error") from exc
    except invites.InviteDecryptError as exc:
        raise InvalidInput("The invite could not be decrypted: wrong password or not an invite.",
                           error_id="api.remote_cluster.invite_decrypt_error") from exc
    site_url = data.get("site_url")
    token = data.get("token")
    if (
        not is_id(data.get("remote_id"))
        or not isinstance(site_url, str)
        or urlsplit(site_url).scheme not in ("http", "https")
        or not isinstance(token, str)
        or not token
    ):
        raise InvalidInput("The invite does not hold a remote_id, an http(s) site_url and a token.",
                           error_id="api.remote_cluster.invite_decrypt_error")
    return {"remote_id": data["remote_id"], "site_url": site_url.rstrip("/"), "token": token}


# --- server-to-server -------------------------------------------------------------------


def authenticate_remote(remote_id: str | None, token: str | None) -> RemoteCluster:
    """The remote presenting these headers. Raises Unauthorized (401)."""
    if not remote_id:
        raise Unauthorized("The X-RemoteCluster-Id header is missing.",
                           error_id="api.context.remote_id_missing.app_error")
    rc = db.session.get(RemoteCluster, remote_id) if is_id(remote_id) else None
    stored = rc.token_hash if rc is not None and rc.delete_at == 0 else ""
    # Compare even when there is no record, so the answer takes the same time either way.
    if not secret_matches(token or "", stored):
        raise Unauthorized("The remote cluster token is missing or invalid.",
                           error_id="api.context.invalid_token.error", token_presented=bool(token))
    return rc


def confirm_invite(rc: RemoteCluster, presented_token: str, body: dict) -> None:
    """The inviter's side of the handshake (SPEC 5): the invite token dies after one use.

    Raises InvalidInput (wrong remote_id, expired, already confirmed) or Unauthorized (lost a
    race with another confirmation).
    """
    payload = body["msg"]["payload"]
    if body["remote_id"] != rc.remote_id or payload["remote_id"] != rc.remote_id:
        raise InvalidInput("Invalid body parameter remote_id: it does not match X-RemoteCluster-Id.")
    if urlsplit(payload["site_url"]).scheme not in ("http", "https"):
        raise InvalidInput("Invalid body parameter msg.payload.site_url: not an http(s) URL.")
    if rc.is_confirmed:
        raise InvalidInput("This remote cluster is already confirmed.",
                           error_id="api.remote_cluster.already_confirmed.app_error")
    now = now_ms()
    if rc.create_at < now - INVITE_EXPIRES_MS:
        raise InvalidInput("The invitation has expired (48 hours).",
                           error_id="api.context.invitation_expired.error")
    rows = db.session.execute(
        update(RemoteCluster)
        .where(
            RemoteCluster.remote_id == rc.remote_id,
            RemoteCluster.token_hash == hash_secret(presented_token),
            RemoteCluster.delete_at == 0,
            RemoteCluster.site_url.startswith(PENDING_SITE_URL_PREFIX, autoescape=True),
            RemoteCluster.create_at >= now - INVITE_EXPIRES_MS,
        )
        .values(
            site_url=payload["site_url"].rstrip("/"),
            remote_token_sealed=_sealed(rc.remote_id, payload["token"]),
            token_hash=hash_secret(payload["refreshed_token"]),
        )
        .execution_options(synchronize_session=False)
    ).rowcount
    if rows != 1:
        raise Unauthorized("The invitation was used meanwhile.", error_id="api.context.invalid_token.error",
                           token_presented=True)


def receive_ping(rc: RemoteCluster, sent_at: int) -> dict:
    """A confirmed remote pinged us: record it. Raises Unauthorized for a pending remote
    (the invite token only confirms)."""
    if not rc.is_confirmed:
        raise Unauthorized("This remote cluster is not confirmed.", error_id="api.context.invalid_token.error",
                           token_presented=True)
    now = now_ms()
    db.session.execute(
        update(RemoteCluster)
        .where(RemoteCluster.remote_id == rc.remote_id, RemoteCluster.delete_at == 0)
        .values(last_ping_at=now)
        .execution_options(synchronize_session=False)
    )
    return {"sent_at": sent_at, "recv_at": now}


@dataclass
class PingResult:
    remote_id: str
    site_url: str
    ok: bool
    status: int | None = None
    error: str = ""
    error_id: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def ping_all_remotes(*, timeout: float = REMOTE_TIMEOUT_SECONDS) -> list[PingResult]:
    """Ping every confirmed, not deleted remote once and record `last_ping_at` for those
    that answered. The caller commits. (SPEC 5 keep-alive; the job runner's
    remote_cluster_ping job calls this every 60 s.)
    """
    rows = db.session.scalars(
        select(RemoteCluster).where(
            RemoteCluster.delete_at == 0,
            ~RemoteCluster.site_url.startswith(PENDING_SITE_URL_PREFIX, autoescape=True),
        ).order_by(RemoteCluster.remote_id)
    ).all()
    targets = [(rc.remote_id, rc.site_url, rc.remote_token_sealed) for rc in rows]
    _end_transaction()
    results = []
    for remote_id, site_url, sealed in targets:
        try:
            token = _unsealed(remote_id, sealed)
            _post_remote(site_url, "ping", remote_id=remote_id, token=token,
                         body={"sent_at": now_ms()}, timeout=timeout)
        except SealedSecretError:
            results.append(PingResult(remote_id, site_url, False, error="stored token does not open (SECRET_KEY changed?)"))
            continue
        except RemoteCallFailed as exc:
            results.append(PingResult(remote_id, site_url, False, exc.status, str(exc), exc.error_id))
            continue
        results.append(PingResult(remote_id, site_url, True, 200))
    succeeded = [r.remote_id for r in results if r.ok]
    if succeeded:
        db.session.execute(
            update(RemoteCluster)
            .where(RemoteCluster.remote_id.in_(succeeded), RemoteCluster.delete_at == 0)
            .values(last_ping_at=now_ms())
            .execution_options(synchronize_session=False)
        )
    return results


__all__ = [
    "RemoteCallFailed",
    "RemoteClusterFilter",
    "PingResult",
    "accept_invite",
    "authenticate_remote",
    "configured_site_url",
    "confirm_invite",
    "create_remote_cluster",
    "delete_remote_cluster",
    "ensure_service_enabled",
    "generate_invite",
    "get_remote_cluster",
    "guard_remote_url",
    "list_remote_clusters",
    "patch_remote_cluster",
    "ping_all_remotes",
    "receive_ping",
    "require_site_url",
    "service_enabled",
]
