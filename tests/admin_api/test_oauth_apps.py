"""SPEC 2.1: OAuth app administration over /api/v4/oauth/apps (permission manage_oauth)."""

from __future__ import annotations

import pytest

from extensions import db
from oauth.models import Client, Token
from tests.conftest import TOKEN_URL, basic
from utils import hash_secret

APP = {"name": "Wiki", "description": "team wiki", "callback_urls": ["https://wiki.example.org/cb"],
       "homepage": "https://wiki.example.org"}


@pytest.fixture
def admin_headers(make_user, make_pat):
    return {"Authorization": f"Bearer {make_pat(make_user(admin=True))}"}


@pytest.fixture
def user_headers(make_user, make_pat):
    return {"Authorization": f"Bearer {make_pat(make_user())}"}


def test_create_app_returns_201_with_secret_once_and_stores_its_hash(app, client, admin_headers):
    resp = client.post("/api/v4/oauth/apps", json=APP, headers=admin_headers)
    assert resp.status_code == 201, resp.get_data(as_text=True)
    body = resp.get_json()
    assert len(body["id"]) == 26 and len(body["client_secret"]) == 64
    assert body["callback_urls"] == APP["callback_urls"] and body["is_public"] is False and body["is_trusted"] is False
    with app.app_context():
        row = db.session.scalars(db.select(Client)).one()
        assert row.client_secret_hash == hash_secret(body["client_secret"])
    again = client.get(f"/api/v4/oauth/apps/{body['id']}", headers=admin_headers).get_json()
    assert again["client_secret"] == ""
    listed = client.get("/api/v4/oauth/apps", headers=admin_headers).get_json()
    assert [a["id"] for a in listed] == [body["id"]] and listed[0]["client_secret"] == ""


def test_public_app_has_no_secret(client, admin_headers):
    body = client.post("/api/v4/oauth/apps", json={**APP, "is_public": True}, headers=admin_headers).get_json()
    assert body["is_public"] is True and body["client_secret"] == ""


@pytest.mark.parametrize("patch", [
    {"name": ""}, {"name": "x" * 65}, {"callback_urls": []}, {"callback_urls": ["http://wiki.example.org/cb"]},
    {"callback_urls": ["https://a.example.org/#frag"]}, {"callback_urls": "https://a.example.org"},
    {"unknown_field": 1}, {"is_trusted": "maybe"},
])
def test_create_app_rejects_bad_fields_with_400(app, client, admin_headers, patch):
    resp = client.post("/api/v4/oauth/apps", json={**APP, **patch}, headers=admin_headers)
    assert resp.status_code == 400
    assert resp.get_json()["id"] == "api.context.invalid_body_param.app_error"
    with app.app_context():
        assert db.session.query(Client).count() == 0


def test_update_app_replaces_fields_and_keeps_secret(client, admin_headers):
    created = client.post("/api/v4/oauth/apps", json=APP, headers=admin_headers).get_json()
    resp = client.put(f"/api/v4/oauth/apps/{created['id']}",
                      json={**APP, "id": created["id"], "name": "Wiki 2", "callback_urls": ["https://w2.example.org/cb"],
                            "is_trusted": True},
                      headers=admin_headers)
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["name"] == "Wiki 2" and body["callback_urls"] == ["https://w2.example.org/cb"] and body["is_trusted"]
    mismatch = client.put(f"/api/v4/oauth/apps/{created['id']}", json={**APP, "id": "x" * 26}, headers=admin_headers)
    assert mismatch.status_code == 400


def test_regen_secret_replaces_the_secret(client, admin_headers, make_user, get_code):
    created = client.post("/api/v4/oauth/apps", json=APP, headers=admin_headers).get_json()
    regen = client.post(f"/api/v4/oauth/apps/{created['id']}/regen_secret", headers=admin_headers)
    assert regen.status_code == 200
    new_secret = regen.get_json()["client_secret"]
    assert new_secret and new_secret != created["client_secret"]
    resp = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": "x"},
                       headers=basic(created["id"], created["client_secret"]))
    assert resp.status_code == 401


def test_delete_app_revokes_its_tokens_in_the_same_transaction(app, client, admin_headers, make_user, get_code):
    created = client.post("/api/v4/oauth/apps", json=APP, headers=admin_headers).get_json()
    with app.app_context():
        row = db.session.scalars(db.select(Client)).one()
        db.session.expunge(row)
    row.secret = created["client_secret"]
    code, verifier = get_code(row, make_user())
    tokens = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                         headers=basic(row.client_id, row.secret)).get_json()
    resp = client.delete(f"/api/v4/oauth/apps/{created['id']}", headers=admin_headers)
    assert resp.status_code == 200 and resp.get_json() == {"status": "OK"}
    with app.app_context():
        assert db.session.query(Token).count() == 0
    me = client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert me.status_code == 401
    assert client.get(f"/api/v4/oauth/apps/{created['id']}", headers=admin_headers).status_code == 404


@pytest.mark.parametrize("method,path", [
    ("post", "/api/v4/oauth/apps"), ("get", "/api/v4/oauth/apps"), ("get", "/api/v4/oauth/apps/abc"),
    ("put", "/api/v4/oauth/apps/abc"), ("delete", "/api/v4/oauth/apps/abc"),
    ("post", "/api/v4/oauth/apps/abc/regen_secret"),
])
def test_every_route_needs_manage_oauth_before_the_body(client, user_headers, method, path):
    resp = getattr(client, method)(path, data="{junk", content_type="application/json", headers=user_headers)
    assert resp.status_code == 403
    assert resp.get_json()["id"] == "api.context.permissions.app_error"
    assert getattr(client, method)(path).status_code == 401


def test_unknown_app_is_404(client, admin_headers):
    resp = client.get("/api/v4/oauth/apps/" + "y" * 26, headers=admin_headers)
    assert resp.status_code == 404


def test_per_page_is_clamped_and_bad_paging_is_400(client, admin_headers):
    assert client.get("/api/v4/oauth/apps?per_page=1000", headers=admin_headers).status_code == 200
    assert client.get("/api/v4/oauth/apps?per_page=-1", headers=admin_headers).status_code == 400
    assert client.get("/api/v4/oauth/apps?page=abc", headers=admin_headers).status_code == 400
