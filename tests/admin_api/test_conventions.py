"""SPEC 1.2–1.4 and 3.1: the conventions every /api/v4 endpoint shares."""

from __future__ import annotations

import secrets

import pytest

from extensions import db
from oauth import services
from utils import is_id

API_EMPTY_DETAIL = {"detailed_error": ""}


def assert_envelope(resp, status: int, error_id: str) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["id"] == error_id
    assert body["status_code"] == status
    assert body["detailed_error"] == ""
    assert body["message"]
    assert body["request_id"] == resp.headers["X-Request-Id"]
    return body


def fast_user(make_user, **kw):
    """A user without a password (no slow KDF): these tests only use Bearer tokens."""
    return make_user(password="", auth_service="ldap", **kw)


@pytest.fixture
def admin_token(make_user, make_pat):
    return make_pat(fast_user(make_user, admin=True))


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_no_token_is_401_with_bearer_challenge(client):
    resp = client.get("/api/v4/users")
    assert_envelope(resp, 401, "api.context.session_expired.app_error")
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="authflow"'


def test_bad_token_is_401_with_invalid_token_challenge(client):
    resp = client.get("/api/v4/users", headers=bearer("not-a-token"))
    assert_envelope(resp, 401, "api.context.session_expired.app_error")
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="authflow", error="invalid_token"'


def test_token_in_query_string_is_not_accepted(client, admin_token):
    resp = client.get(f"/api/v4/users?access_token={admin_token}")
    assert_envelope(resp, 401, "api.context.session_expired.app_error")
    assert client.get("/api/v4/users", headers=bearer(admin_token)).status_code == 200


def test_valid_request_id_is_echoed(client, admin_token):
    resp = client.get("/api/v4/users/me", headers={**bearer(admin_token), "X-Request-Id": "abc.DEF-123_x"})
    assert resp.status_code == 200
    assert resp.headers["X-Request-Id"] == "abc.DEF-123_x"
    err = client.get("/api/v4/nope", headers={"X-Request-Id": "trace-42"})
    assert err.get_json()["request_id"] == "trace-42"


@pytest.mark.parametrize("incoming", ["has space", "x" * 65, "semi;colon", ""])
def test_invalid_request_id_is_replaced(client, incoming):
    resp = client.get("/api/v4/nope", headers={"X-Request-Id": incoming})
    replaced = resp.headers["X-Request-Id"]
    assert replaced != incoming and is_id(replaced)
    assert resp.get_json()["request_id"] == replaced


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_unknown_api_path_is_404_envelope_for_any_method(client, admin_token, method):
    resp = client.open("/api/v4/no/such/route", method=method, headers=bearer(admin_token))
    assert_envelope(resp, 404, "api.context.404.app_error")


def test_post_opengraph_is_removed_404(client, admin_token):
    resp = client.post("/api/v4/opengraph", json={"url": "https://example.org"}, headers=bearer(admin_token))
    assert_envelope(resp, 404, "api.context.404.app_error")


def test_wrong_method_is_405_envelope(client, admin_token):
    resp = client.put("/api/v4/users", json={}, headers=bearer(admin_token))
    assert_envelope(resp, 405, "api.context.405.app_error")
    assert "POST" in resp.headers["Allow"]


def test_body_over_one_mib_is_413(client, admin_token):
    payload = b'{"username": "' + b"a" * (1024 * 1024) + b'"}'
    resp = client.post("/api/v4/users", data=payload, content_type="application/json", headers=bearer(admin_token))
    assert_envelope(resp, 413, "api.context.request_body_too_large.app_error")


def test_non_json_body_is_415(client, admin_token):
    resp = client.post("/api/v4/users", data="username=x", content_type="application/x-www-form-urlencoded",
                       headers=bearer(admin_token))
    assert_envelope(resp, 415, "api.context.invalid_body_param.app_error")


@pytest.mark.parametrize("payload", ['{"username": ', "[1, 2", "\xff\xfe", "{'a': 1}"])
def test_malformed_json_is_400_never_500(client, admin_token, payload):
    resp = client.post("/api/v4/users", data=payload, content_type="application/json", headers=bearer(admin_token))
    assert_envelope(resp, 400, "api.context.invalid_body_param.app_error")


def test_json_that_is_not_an_object_is_400(client, admin_token):
    resp = client.post("/api/v4/users", json=[1, 2], headers=bearer(admin_token))
    assert_envelope(resp, 400, "api.context.invalid_body_param.app_error")


def test_per_page_is_clamped_to_200(app, client, admin_token):
    with app.app_context():
        for i in range(205):
            db.session.add(services.User(username=f"bulk{i:03d}", email=f"bulk{i:03d}@example.org"))
        db.session.commit()
    resp = client.get("/api/v4/users?per_page=1000", headers=bearer(admin_token))
    assert resp.status_code == 200
    assert len(resp.get_json()) == 200
    assert len(client.get("/api/v4/users", headers=bearer(admin_token)).get_json()) == 60


@pytest.mark.parametrize("query", ["per_page=-1", "per_page=abc", "page=-1", "page=1.5"])
def test_negative_or_non_integer_paging_is_400(client, admin_token, query):
    resp = client.get(f"/api/v4/users?{query}", headers=bearer(admin_token))
    assert_envelope(resp, 400, "api.context.invalid_url_param.app_error")


def test_times_are_milliseconds_and_ids_are_26_chars(client, admin_token):
    me = client.get("/api/v4/users/me", headers=bearer(admin_token)).get_json()
    assert is_id(me["id"])
    assert me["create_at"] > 10**12  # milliseconds, not seconds
    assert me["delete_at"] == 0


@pytest.fixture
def profile_only_token(app, make_user, make_client):
    """An OAuth access token granted only the `profile` scope."""
    user = fast_user(make_user, admin=True)
    client_row = make_client()
    raw = secrets.token_urlsafe(32)
    with app.app_context():
        services.store_token(
            {"access_token": raw, "expires_in": 3600, "scope": "profile"},
            client=db.session.get(services.Client, client_row.id),
            user=services.get_user(user.id),
            grant_type="authorization_code",
            granted_scope="profile",
            refresh_ttl=0,
        )
        db.session.commit()
    return raw


def test_token_without_api_scope_is_403_except_users_me(client, profile_only_token):
    resp = client.get("/api/v4/users", headers=bearer(profile_only_token))
    assert_envelope(resp, 403, "api.context.permissions.app_error")
    me = client.get("/api/v4/users/me", headers=bearer(profile_only_token))
    assert me.status_code == 200 and is_id(me.get_json()["id"])


def test_permission_is_checked_before_the_body(client, make_user, make_pat):
    token = make_pat(fast_user(make_user))
    resp = client.post("/api/v4/users", data="{not json", content_type="application/json", headers=bearer(token))
    assert_envelope(resp, 403, "api.context.permissions.app_error")


def test_roles_command_prints_the_table(app):
    result = app.test_cli_runner().invoke(args=["roles", "--json"])
    assert result.exit_code == 0
    import json

    table = json.loads(result.output)
    assert "manage_secure_connections" in table["system_admin"]
    assert "manage_secure_connections" not in table["system_user"]
