"""SPEC 5 and 8.17: remote clusters, one test per rule (the two-server run is in tests/e2e)."""

from __future__ import annotations

import functools
import json

import pytest

from admin_api import invites
from admin_api import remote_cluster_services as rcs
from admin_api.models import RemoteCluster, Team
from admin_api.permissions import ROLE_PERMISSIONS
from admin_api.secret_box import unseal
from extensions import db
from tests.live import free_port
from utils import hash_secret, is_id, new_id, new_secret, now_ms

PASSWORD = "invite-password-1"
SANITIZED = {"token": "", "remote_token": ""}


# --- fixtures ----------------------------------------------------------------------------


def _headers(make_user, make_pat, **kw) -> dict:
    user = make_user(password="", auth_service="ldap", **kw)
    return {"Authorization": f"Bearer {make_pat(user)}"}


@pytest.fixture
def admin(make_user, make_pat) -> dict:
    return _headers(make_user, make_pat, admin=True)


@pytest.fixture
def plain_user(make_user, make_pat) -> dict:
    return _headers(make_user, make_pat)


@pytest.fixture
def team_id(app) -> str:
    with app.app_context():
        team = Team(name="home", display_name="Home")
        db.session.add(team)
        db.session.commit()
        return team.id


@pytest.fixture
def make_remote(app, team_id):
    """Insert a remote cluster row directly; `token` is what the remote presents to us."""

    def make(*, token: str | None = None, confirmed: bool = True, **fields) -> str:
        with app.app_context():
            remote_id = fields.pop("remote_id", None) or new_id()
            name = fields.pop("name", "remote-" + remote_id[:6])
            rc = RemoteCluster(
                remote_id=remote_id,
                name=name,
                display_name=fields.pop("display_name", name),
                site_url=fields.pop("site_url", "http://127.0.0.1:9" if confirmed else "pending_" + new_id()),
                default_team_id=team_id,
                token_hash=hash_secret(token) if token else "",
                **fields,
            )
            db.session.add(rc)
            db.session.commit()
            return remote_id

    return make


def remote_count(app) -> int:
    with app.app_context():
        return db.session.query(RemoteCluster).count()


def row(app, remote_id) -> RemoteCluster:
    with app.app_context():
        rc = db.session.get(RemoteCluster, remote_id)
        db.session.expunge(rc)
        return rc


def assert_error(resp, status: int, error_id: str) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["id"] == error_id, body
    assert body["status_code"] == status
    return body


@functools.cache
def invite_to(site_url: str, remote_id: str, token: str, password: str = PASSWORD, version: int = 3) -> str:
    """An invite as another server would make it (cached: PBKDF2 costs ~0.2 s)."""
    return invites.encrypt_invite(
        {"remote_id": remote_id, "site_url": site_url, "token": token, "version": version}, password
    )


CLOSED_PORT = free_port()  # nothing listens there: connection refused at once
UNREACHABLE_URL = f"http://127.0.0.1:{CLOSED_PORT}"
FOREIGN_REMOTE_ID = new_id()
FOREIGN_TOKEN = new_secret()


def accept_body(team_id: str, **over) -> dict:
    body = {
        "name": "inviter",
        "default_team_id": team_id,
        "invite": invite_to(UNREACHABLE_URL, FOREIGN_REMOTE_ID, FOREIGN_TOKEN),
        "password": PASSWORD,
    }
    body.update(over)
    return body


# --- permissions and check order -----------------------------------------------------------

ROUTES = [
    ("GET", "/api/v4/remotecluster"),
    ("POST", "/api/v4/remotecluster"),
    ("POST", f"/api/v4/remotecluster/{'r' * 26}/generate_invite"),
    ("POST", "/api/v4/remotecluster/accept_invite"),
    ("GET", f"/api/v4/remotecluster/{'r' * 26}"),
    ("PATCH", f"/api/v4/remotecluster/{'r' * 26}"),
    ("DELETE", f"/api/v4/remotecluster/{'r' * 26}"),
]


@pytest.mark.parametrize("method,path", ROUTES)
def test_every_route_needs_manage_secure_connections(client, plain_user, method, path):
    resp = client.open(path, method=method, data="{malformed", content_type="application/json", headers=plain_user)
    assert_error(resp, 403, "api.context.permissions.app_error")


@pytest.mark.parametrize("method,path", ROUTES)
def test_every_route_without_token_is_401(client, method, path):
    resp = client.open(path, method=method, json={})
    assert_error(resp, 401, "api.context.session_expired.app_error")


def test_get_routes_also_accept_manage_shared_channels(client, make_user, make_pat, monkeypatch, make_remote):
    monkeypatch.setitem(ROLE_PERMISSIONS, "shared_channel_manager", frozenset({"manage_shared_channels"}))
    headers = _headers(make_user, make_pat, roles="system_user shared_channel_manager")
    remote_id = make_remote()
    assert client.get("/api/v4/remotecluster", headers=headers).status_code == 200
    assert client.get(f"/api/v4/remotecluster/{remote_id}", headers=headers).status_code == 200
    resp = client.delete(f"/api/v4/remotecluster/{remote_id}", headers=headers)
    assert_error(resp, 403, "api.context.permissions.app_error")


@pytest.mark.parametrize("method,path", ROUTES + [("POST", "/api/v4/remotecluster/ping")])
def test_service_disabled_is_501_after_permission_before_body(client, admin, plain_user, set_config, method, path):
    set_config({"ConnectedWorkspacesSettings": {"EnableRemoteClusterService": False}})
    resp = client.open(path, method=method, data="{malformed", content_type="application/json", headers=admin)
    assert_error(resp, 501, "api.remote_cluster.service_not_enabled.app_error")
    if path.endswith("/ping"):
        return
    resp = client.open(path, method=method, data="{malformed", content_type="application/json", headers=plain_user)
    assert_error(resp, 403, "api.context.permissions.app_error")


@pytest.fixture
def no_site_url_client(other_app):
    """A server started without AUTHFLOW_BASE_URL: SiteURL is "" until an operator sets it (8.19)."""
    return other_app(AUTHFLOW_BASE_URL="").test_client()


@pytest.mark.parametrize("path", ["/api/v4/remotecluster", "/api/v4/remotecluster/accept_invite"])
def test_body_is_checked_before_site_url(no_site_url_client, admin, path):
    client = no_site_url_client
    resp = client.post(path, data="{malformed", content_type="application/json", headers=admin)
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")
    resp = client.post(path, json={"name": "x"}, headers=admin)  # default_team_id missing
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")


def test_site_url_unset_is_422_before_field_rules(app, no_site_url_client, admin, team_id):
    client = no_site_url_client
    bad_name = {"name": "not a name!", "default_team_id": "nope"}
    resp = client.post("/api/v4/remotecluster", json=bad_name, headers=admin)
    assert_error(resp, 422, "api.get_site_url_error")
    resp = client.post("/api/v4/remotecluster/accept_invite",
                       json={**bad_name, "invite": "!!", "password": "x"}, headers=admin)
    assert_error(resp, 422, "api.get_site_url_error")
    assert remote_count(app) == 0


# --- create ----------------------------------------------------------------------------------


def test_create_returns_201_record_invite_and_generated_password(app, client, admin, team_id):
    resp = client.post("/api/v4/remotecluster", json={"name": "Beta.Site", "default_team_id": team_id}, headers=admin)
    assert resp.status_code == 201, resp.get_data(as_text=True)
    body = resp.get_json()
    assert set(body) == {"remote_cluster", "invite", "password"}
    rc = body["remote_cluster"]
    assert is_id(rc["remote_id"])
    assert rc["name"] == "beta.site" and rc["display_name"] == "beta.site"
    assert rc["site_url"].startswith("pending_")
    assert rc["default_team_id"] == team_id
    assert rc["create_at"] > 10**12 and rc["delete_at"] == 0 and rc["last_ping_at"] == 0
    assert rc["online"] is False and rc | SANITIZED == rc
    assert len(body["password"]) == 16
    invite = invites.decrypt_invite(body["invite"], body["password"])
    assert invite["remote_id"] == rc["remote_id"]
    assert invite["site_url"] == "http://localhost" and invite["version"] == 3
    stored = row(app, rc["remote_id"])
    assert stored.token_hash == hash_secret(invite["token"])  # only the hash is kept


def test_create_with_password_does_not_echo_it(client, admin, team_id):
    resp = client.post("/api/v4/remotecluster",
                       json={"name": "b", "display_name": "Bee", "default_team_id": team_id, "password": PASSWORD},
                       headers=admin)
    assert resp.status_code == 201
    body = resp.get_json()
    assert "password" not in body and body["remote_cluster"]["display_name"] == "Bee"


@pytest.mark.parametrize(
    "body,field",
    [
        ({"name": "ok"}, "default_team_id"),
        ({"name": "ok", "default_team_id": "x" * 26}, "default_team_id"),
        ({"name": "", "default_team_id": "TEAM"}, "name"),
        ({"name": "has space", "default_team_id": "TEAM"}, "name"),
        ({"name": "x" * 65, "default_team_id": "TEAM"}, "name"),
        ({"name": "ünï", "default_team_id": "TEAM"}, "name"),
        ({"name": 5, "default_team_id": "TEAM"}, "name"),
        ({"name": "ok", "display_name": "d" * 65, "default_team_id": "TEAM"}, "display_name"),
        ({"name": "ok", "default_team_id": "TEAM", "token": "mine"}, "token"),
    ],
)
def test_create_bad_fields_are_400_naming_the_field(app, client, admin, team_id, body, field):
    body = {k: (team_id if v == "TEAM" else v) for k, v in body.items()}
    resp = client.post("/api/v4/remotecluster", json=body, headers=admin)
    err = assert_error(resp, 400, "api.context.invalid_body_param.app_error")
    assert field in err["message"]
    assert remote_count(app) == 0


# --- sanitizing ------------------------------------------------------------------------------


def test_every_response_blanks_both_tokens(app, client, admin, make_remote, team_id):
    secret = new_secret()
    remote_id = make_remote(token=secret, remote_token_sealed="sealed-value")
    responses = [
        client.get("/api/v4/remotecluster", headers=admin).get_json()[0],
        client.get(f"/api/v4/remotecluster/{remote_id}", headers=admin).get_json(),
        client.patch(f"/api/v4/remotecluster/{remote_id}", json={"display_name": "New"}, headers=admin).get_json(),
        client.post("/api/v4/remotecluster", json={"name": "n", "default_team_id": team_id}, headers=admin)
        .get_json()["remote_cluster"],
    ]
    for record in responses:
        assert record["token"] == "" and record["remote_token"] == ""
        assert secret not in json.dumps(record) and "sealed-value" not in json.dumps(record)


# --- list ------------------------------------------------------------------------------------


def test_list_is_an_empty_array_when_there_are_none(client, admin):
    resp = client.get("/api/v4/remotecluster", headers=admin)
    assert resp.status_code == 200 and resp.get_json() == []


def test_list_is_sorted_by_display_name_then_name(client, admin, make_remote):
    make_remote(name="zed", display_name="Alpha")
    make_remote(name="abe", display_name="Beta")
    make_remote(name="amy", display_name="Alpha")
    rows = client.get("/api/v4/remotecluster", headers=admin).get_json()
    assert [(r["display_name"], r["name"]) for r in rows] == [("Alpha", "amy"), ("Alpha", "zed"), ("Beta", "abe")]
    page = client.get("/api/v4/remotecluster?per_page=2&page=1", headers=admin).get_json()
    assert [r["name"] for r in page] == ["abe"]


def test_list_filters(client, admin, make_remote):
    creator = new_id()
    make_remote(name="online", last_ping_at=now_ms() - 1000, creator_id=creator, topics=" share files ")
    make_remote(name="stale", last_ping_at=now_ms() - 6 * 60 * 1000)
    make_remote(name="pending", confirmed=False)
    make_remote(name="plugin", plugin_id="com.example.plugin")
    make_remote(name="gone", delete_at=now_ms())

    def names(query: str) -> list[str]:
        resp = client.get(f"/api/v4/remotecluster?{query}", headers=admin)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        return sorted(r["name"] for r in resp.get_json())

    assert names("") == ["online", "pending", "plugin", "stale"]
    assert names("include_deleted=true") == ["gone", "online", "pending", "plugin", "stale"]
    assert names("exclude_offline=true") == ["online"]
    assert names("only_confirmed=true") == ["online", "plugin", "stale"]
    assert names(f"creator_id={creator}") == ["online"]
    assert names("topic=files") == ["online"]
    assert names("topic=fil") == []
    assert names("only_plugins=true") == ["plugin"]
    assert names("exclude_plugins=true") == ["online", "pending", "stale"]
    both = client.get("/api/v4/remotecluster?only_plugins=true&exclude_plugins=true", headers=admin)
    assert_error(both, 400, "api.context.invalid_url_param.app_error")
    assert_error(client.get("/api/v4/remotecluster?only_confirmed=maybe", headers=admin), 400,
                 "api.context.invalid_url_param.app_error")


def test_online_means_a_ping_in_the_last_five_minutes(client, admin, make_remote):
    fresh = make_remote(last_ping_at=now_ms() - 4 * 60 * 1000)
    stale = make_remote(last_ping_at=now_ms() - 5 * 60 * 1000 - 1000)
    assert client.get(f"/api/v4/remotecluster/{fresh}", headers=admin).get_json()["online"] is True
    assert client.get(f"/api/v4/remotecluster/{stale}", headers=admin).get_json()["online"] is False


# --- generate_invite -------------------------------------------------------------------------


def test_generate_invite_returns_a_json_string_and_retires_earlier_invites(app, client, admin, make_remote):
    old_token = new_secret()
    remote_id = make_remote(token=old_token, confirmed=False)
    resp = client.post(f"/api/v4/remotecluster/{remote_id}/generate_invite", json={"password": PASSWORD}, headers=admin)
    assert resp.status_code == 201
    code = resp.get_json()
    assert isinstance(code, str)
    invite = invites.decrypt_invite(code, PASSWORD)
    assert invite["remote_id"] == remote_id and invite["token"] != old_token
    assert row(app, remote_id).token_hash == hash_secret(invite["token"])


@pytest.mark.parametrize("body", [{}, {"password": ""}, {"password": 5}])
def test_generate_invite_without_password_is_400(client, admin, make_remote, body):
    remote_id = make_remote(confirmed=False)
    resp = client.post(f"/api/v4/remotecluster/{remote_id}/generate_invite", json=body, headers=admin)
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")


def test_generate_invite_for_unknown_or_deleted_is_404(client, admin, make_remote):
    gone = make_remote(confirmed=False, delete_at=now_ms())
    for remote_id in (new_id(), gone, "not-an-id"):
        resp = client.post(f"/api/v4/remotecluster/{remote_id}/generate_invite", json={"password": "p"}, headers=admin)
        assert_error(resp, 404, "app.remote_cluster.get.not_found.app_error")


def test_generate_invite_for_confirmed_is_400(client, admin, make_remote):
    remote_id = make_remote(confirmed=True)
    resp = client.post(f"/api/v4/remotecluster/{remote_id}/generate_invite", json={"password": "p"}, headers=admin)
    assert_error(resp, 400, "api.remote_cluster.already_confirmed.app_error")


# --- get / patch / delete --------------------------------------------------------------------


def test_get_returns_deleted_ones_too_and_404_for_unknown(client, admin, make_remote):
    gone = make_remote(delete_at=now_ms())
    resp = client.get(f"/api/v4/remotecluster/{gone}", headers=admin)
    assert resp.status_code == 200 and resp.get_json()["delete_at"] > 0
    assert_error(client.get(f"/api/v4/remotecluster/{new_id()}", headers=admin), 404,
                 "app.remote_cluster.get.not_found.app_error")


def test_patch_changes_display_name_and_default_team(app, client, admin, make_remote):
    remote_id = make_remote(name="orig")
    with app.app_context():
        other = Team(name="other", display_name="Other")
        db.session.add(other)
        db.session.commit()
        other_id = other.id
    resp = client.patch(f"/api/v4/remotecluster/{remote_id}",
                        json={"display_name": "Shown", "default_team_id": other_id}, headers=admin)
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["display_name"] == "Shown" and body["default_team_id"] == other_id and body["name"] == "orig"
    assert body | SANITIZED == body


@pytest.mark.parametrize("body", [{"default_team_id": "x" * 26}, {"name": "rename"}, {"display_name": ""},
                                  {"site_url": "http://evil"}, {"display_name": 3}])
def test_patch_bad_fields_are_400_and_change_nothing(app, client, admin, make_remote, body):
    remote_id = make_remote(name="orig")
    resp = client.patch(f"/api/v4/remotecluster/{remote_id}", json=body, headers=admin)
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")
    after = row(app, remote_id)
    assert after.display_name == "orig" and after.name == "orig"


def test_patch_unknown_is_404(client, admin):
    resp = client.patch(f"/api/v4/remotecluster/{new_id()}", json={"display_name": "x"}, headers=admin)
    assert_error(resp, 404, "app.remote_cluster.get.not_found.app_error")


def test_delete_is_soft_and_the_remote_can_no_longer_authenticate(app, client, admin, make_remote):
    token = new_secret()
    remote_id = make_remote(token=token)
    headers = {"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": token}
    assert client.post("/api/v4/remotecluster/ping", json={"sent_at": 1}, headers=headers).status_code == 200
    resp = client.delete(f"/api/v4/remotecluster/{remote_id}", headers=admin)
    assert resp.status_code == 200 and resp.get_json() == {"status": "OK"}
    assert row(app, remote_id).delete_at > 0
    resp = client.post("/api/v4/remotecluster/ping", json={"sent_at": 1}, headers=headers)
    assert_error(resp, 401, "api.context.invalid_token.error")
    assert_error(client.delete(f"/api/v4/remotecluster/{remote_id}", headers=admin), 404,
                 "app.remote_cluster.get.not_found.app_error")


# --- server-to-server: confirm_invite and ping ---------------------------------------------------


def confirm_message(remote_id: str, *, site_url: str = "http://127.0.0.1:8999", payload_id: str | None = None) -> dict:
    return {
        "remote_id": remote_id,
        "msg": {
            "id": new_id(),
            "topic": "invitation",
            "create_at": now_ms(),
            "payload": {
                "remote_id": payload_id or remote_id,
                "site_url": site_url,
                "token": "t2-" + new_secret(),
                "refreshed_token": "x-" + new_secret(),
                "version": 3,
            },
        },
    }


def test_confirm_invite_sets_site_url_and_swaps_tokens(app, client, make_remote):
    invite_token = new_secret()
    remote_id = make_remote(token=invite_token, confirmed=False)
    message = confirm_message(remote_id)
    resp = client.post("/api/v4/remotecluster/confirm_invite", json=message,
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": invite_token})
    assert resp.status_code == 200 and resp.get_json() == {"status": "OK"}
    payload = message["msg"]["payload"]
    with app.app_context():
        rc = db.session.get(RemoteCluster, remote_id)
        assert rc.site_url == payload["site_url"]
        assert rc.token_hash == hash_secret(payload["refreshed_token"])
        assert payload["token"] not in rc.remote_token_sealed
        assert unseal(rc.remote_token_sealed, purpose="remote_cluster.remote_token", context=remote_id) == payload["token"]


def test_invite_token_is_single_use(client, make_remote):
    invite_token = new_secret()
    remote_id = make_remote(token=invite_token, confirmed=False)
    headers = {"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": invite_token}
    first = client.post("/api/v4/remotecluster/confirm_invite", json=confirm_message(remote_id), headers=headers)
    assert first.status_code == 200
    again = client.post("/api/v4/remotecluster/confirm_invite", json=confirm_message(remote_id), headers=headers)
    assert_error(again, 401, "api.context.invalid_token.error")


def test_confirm_invite_race_has_one_winner(app, make_remote):
    """Two confirmations that both passed the checks: the conditional UPDATE lets one win."""
    from errors import Unauthorized

    invite_token = new_secret()
    remote_id = make_remote(token=invite_token, confirmed=False)
    with app.app_context():
        first = db.session.get(RemoteCluster, remote_id)
        rcs.confirm_invite(first, invite_token, confirm_message(remote_id))
        stale = RemoteCluster(remote_id=remote_id, site_url="pending_x", create_at=now_ms())  # what the loser saw
        with pytest.raises(Unauthorized):
            rcs.confirm_invite(stale, invite_token, confirm_message(remote_id))
        db.session.rollback()


def test_invite_expires_after_48_hours(app, client, make_remote):
    invite_token = new_secret()
    remote_id = make_remote(token=invite_token, confirmed=False, create_at=now_ms() - 48 * 3600 * 1000 - 1000)
    resp = client.post("/api/v4/remotecluster/confirm_invite", json=confirm_message(remote_id),
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": invite_token})
    assert_error(resp, 400, "api.context.invitation_expired.error")
    assert row(app, remote_id).site_url.startswith("pending_")


def test_confirm_invite_payload_remote_id_must_match_header(app, client, make_remote):
    invite_token = new_secret()
    remote_id = make_remote(token=invite_token, confirmed=False)
    resp = client.post("/api/v4/remotecluster/confirm_invite", json=confirm_message(remote_id, payload_id=new_id()),
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": invite_token})
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")
    assert row(app, remote_id).token_hash == hash_secret(invite_token)


def test_confirm_invite_of_a_confirmed_remote_is_400(client, make_remote):
    token = new_secret()
    remote_id = make_remote(token=token, confirmed=True)
    resp = client.post("/api/v4/remotecluster/confirm_invite", json=confirm_message(remote_id),
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": token})
    assert_error(resp, 400, "api.remote_cluster.already_confirmed.app_error")


@pytest.mark.parametrize("path", ["confirm_invite", "ping"])
def test_server_to_server_routes_401_without_the_headers(client, make_remote, path):
    token = new_secret()
    remote_id = make_remote(token=token)
    url = f"/api/v4/remotecluster/{path}"
    body = confirm_message(remote_id) if path == "confirm_invite" else {"sent_at": 1}
    assert_error(client.post(url, json=body), 401, "api.context.remote_id_missing.app_error")
    for headers in (
        {"X-RemoteCluster-Id": remote_id},
        {"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": "wrong"},
        {"X-RemoteCluster-Id": new_id(), "X-RemoteCluster-Token": token},
        {"X-RemoteCluster-Id": remote_id, "Authorization": f"Bearer {token}"},
    ):
        assert_error(client.post(url, json=body, headers=headers), 401, "api.context.invalid_token.error")


def test_ping_answers_sent_at_recv_at_and_records_last_ping_at(app, client, admin, make_remote):
    token = new_secret()
    remote_id = make_remote(token=token)
    before = now_ms()
    resp = client.post("/api/v4/remotecluster/ping", json={"sent_at": 123},
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": token})
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["sent_at"] == 123 and body["recv_at"] >= before
    record = client.get(f"/api/v4/remotecluster/{remote_id}", headers=admin).get_json()
    assert record["last_ping_at"] == body["recv_at"] and record["online"] is True


def test_ping_from_a_pending_remote_is_401(client, make_remote):
    token = new_secret()
    remote_id = make_remote(token=token, confirmed=False)
    resp = client.post("/api/v4/remotecluster/ping", json={"sent_at": 1},
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": token})
    assert_error(resp, 401, "api.context.invalid_token.error")


@pytest.mark.parametrize("body", [{}, {"sent_at": "soon"}])
def test_ping_with_a_bad_body_is_400(client, make_remote, body):
    token = new_secret()
    remote_id = make_remote(token=token)
    resp = client.post("/api/v4/remotecluster/ping", json=body,
                       headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": token})
    assert_error(resp, 400, "api.context.invalid_body_param.app_error")


# --- accept_invite -----------------------------------------------------------------------------


def test_accept_invite_confirms_with_the_inviter_then_saves_a_sanitized_record(app, client, admin, team_id, monkeypatch):
    calls = []

    def fake_post(site_url, path, *, remote_id, token, body, timeout):
        calls.append({"site_url": site_url, "path": path, "remote_id": remote_id, "token": token, "body": body,
                      "timeout": timeout})
        return {"status": "OK"}

    monkeypatch.setattr(rcs, "_post_remote", fake_post)
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id, display_name="Inviter"),
                       headers=admin)
    assert resp.status_code == 201, resp.get_data(as_text=True)
    record = resp.get_json()
    assert record["remote_id"] == FOREIGN_REMOTE_ID and record["site_url"] == UNREACHABLE_URL
    assert record["name"] == "inviter" and record["display_name"] == "Inviter"
    assert record | SANITIZED == record
    [call] = calls
    assert call["path"] == "confirm_invite" and call["token"] == FOREIGN_TOKEN and call["timeout"] == 15
    assert call["remote_id"] == FOREIGN_REMOTE_ID and call["body"]["remote_id"] == FOREIGN_REMOTE_ID
    msg = call["body"]["msg"]
    assert msg["topic"] == "invitation" and is_id(msg["id"]) and msg["create_at"] > 10**12
    payload = msg["payload"]
    assert payload["remote_id"] == FOREIGN_REMOTE_ID and payload["site_url"] == "http://localhost"
    assert payload["version"] == 3 and payload["token"] != payload["refreshed_token"]
    stored = row(app, FOREIGN_REMOTE_ID)
    assert stored.token_hash == hash_secret(payload["token"])  # what the inviter will present to us
    assert payload["refreshed_token"] not in stored.remote_token_sealed
    with app.app_context():
        assert unseal(stored.remote_token_sealed, purpose="remote_cluster.remote_token",
                      context=FOREIGN_REMOTE_ID) == payload["refreshed_token"]


def test_accept_invite_unreachable_inviter_is_502_and_leaves_nothing(app, client, admin, team_id):
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id), headers=admin)
    err = assert_error(resp, 502, "api.remote_cluster.accept_invitation_error")
    assert UNREACHABLE_URL in err["message"]
    assert remote_count(app) == 0


def test_accept_invite_refuses_a_private_inviter_without_the_allowance(app, client, admin, team_id, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_REMOTES", False)
    monkeypatch.setattr(rcs.requests, "post", lambda *a, **kw: pytest.fail("no call may be made"))
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id), headers=admin)
    err = assert_error(resp, 502, "api.remote_cluster.accept_invitation_error")
    assert "non-public address" in err["message"]
    assert remote_count(app) == 0


def test_accept_invite_of_a_known_remote_id_is_409_before_any_call(app, client, admin, team_id, make_remote, monkeypatch):
    make_remote(remote_id=FOREIGN_REMOTE_ID, confirmed=False)
    monkeypatch.setattr(rcs, "_post_remote", lambda *a, **kw: pytest.fail("no call may be made"))
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id), headers=admin)
    assert_error(resp, 409, "api.remote_cluster.already_exists.app_error")
    assert remote_count(app) == 1


@pytest.mark.parametrize(
    "over,error_id,field",
    [
        ({"invite": "not base64 !!"}, "api.remote_cluster.base64_decode_error", "invite"),
        ({"invite": "QUJD"}, "api.remote_cluster.base64_decode_error", "invite"),
        ({"invite": "A" * 100}, "api.remote_cluster.invite_decrypt_error", ""),
        ({"password": "wrong password"}, "api.remote_cluster.invite_decrypt_error", ""),
        ({"default_team_id": "x" * 26}, "api.context.invalid_body_param.app_error", "default_team_id"),
        ({"name": "bad name"}, "api.context.invalid_body_param.app_error", "name"),
        ({"name": ["list"]}, "api.context.invalid_body_param.app_error", "name"),
        ({"password": None}, "api.context.invalid_body_param.app_error", "password"),
        ({"extra": True}, "api.context.invalid_body_param.app_error", "extra"),
    ],
)
def test_accept_invite_bad_input_is_400_and_leaves_nothing(app, client, admin, team_id, monkeypatch, over, error_id, field):
    monkeypatch.setattr(rcs, "_post_remote", lambda *a, **kw: pytest.fail("no call may be made"))
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id, **over), headers=admin)
    err = assert_error(resp, 400, error_id)
    assert field in err["message"]
    assert remote_count(app) == 0


def test_accept_invite_with_content_that_is_no_invite_is_400(app, client, admin, team_id, monkeypatch):
    garbage = invites.encrypt_invite({"remote_id": "short", "site_url": "ftp://x", "token": ""}, PASSWORD)
    monkeypatch.setattr(rcs, "_post_remote", lambda *a, **kw: pytest.fail("no call may be made"))
    resp = client.post("/api/v4/remotecluster/accept_invite", json=accept_body(team_id, invite=garbage), headers=admin)
    assert_error(resp, 400, "api.remote_cluster.invite_decrypt_error")
    assert remote_count(app) == 0


def test_accept_invite_oversized_body_is_413(app, client, admin, team_id):
    body = json.dumps(accept_body(team_id, invite="A" * (1024 * 1024)))
    resp = client.post("/api/v4/remotecluster/accept_invite", data=body, content_type="application/json", headers=admin)
    assert_error(resp, 413, "api.context.request_body_too_large.app_error")
    assert remote_count(app) == 0


# --- keep-alive and the SSRF guard ---------------------------------------------------------------


def test_ping_all_remotes_records_failures_and_leaves_last_ping_at(app, make_remote):
    remote_id = make_remote(site_url=UNREACHABLE_URL, remote_token_sealed="")
    with app.app_context():
        from admin_api.secret_box import seal

        db.session.get(RemoteCluster, remote_id).remote_token_sealed = seal(
            "tok", purpose="remote_cluster.remote_token", context=remote_id)
        db.session.commit()
    make_remote(confirmed=False)  # pending ones are not pinged
    make_remote(delete_at=now_ms())  # nor deleted ones
    result = app.test_cli_runner().invoke(args=["remotecluster", "ping", "--json"])
    assert result.exit_code == 1
    [entry] = json.loads(result.output)
    assert entry["remote_id"] == remote_id and entry["ok"] is False and "could not be reached" in entry["error"]
    assert row(app, remote_id).last_ping_at == 0


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000", "http://10.1.2.3", "http://192.168.0.1", "http://169.254.169.254/latest",
     "http://[::1]:80", "http://[::ffff:127.0.0.1]", "http://0.0.0.0", "http://localhost:8065",
     "http://100.64.0.1", "file:///etc/passwd", "gopher://example.org"],
)
def test_ssrf_guard_refuses_private_addresses(app, monkeypatch, url):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_REMOTES", False)
    with app.app_context(), pytest.raises(rcs.RemoteCallFailed):
        rcs.guard_remote_url(url)


def test_ssrf_guard_allows_public_addresses_and_the_override(app, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_REMOTES", False)
    with app.app_context():
        rcs.guard_remote_url("https://93.184.216.34/api")  # a literal: no DNS lookup leaves the machine
        monkeypatch.setitem(app.config, "ALLOW_PRIVATE_REMOTES", True)
        rcs.guard_remote_url("http://127.0.0.1:8000")
