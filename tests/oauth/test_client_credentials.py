"""SPEC 2.5 and 8.3: the client_credentials grant."""

from __future__ import annotations

from tests.conftest import TOKEN_URL, basic


def test_client_credentials_gives_service_token_without_refresh(client, make_client):
    app_client = make_client(grant_types=["client_credentials"])
    resp = client.post(TOKEN_URL, data={"grant_type": "client_credentials", "scope": "api"},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert "refresh_token" not in body and body["scope"] == "api"
    me = client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {body['access_token']}"}).get_json()
    assert me["id"] == body["user_id"] and me["is_bot"] is True
    again = client.post(TOKEN_URL, data={"grant_type": "client_credentials"},
                        headers=basic(app_client.client_id, app_client.secret)).get_json()
    assert again["user_id"] == body["user_id"] and again["scope"] == "profile"


def test_client_credentials_for_unregistered_client_is_unauthorized_client(client, make_client):
    app_client = make_client()
    resp = client.post(TOKEN_URL, data={"grant_type": "client_credentials"},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "unauthorized_client"


def test_client_credentials_with_unknown_scope_is_invalid_scope(client, make_client):
    app_client = make_client(grant_types=["client_credentials"])
    resp = client.post(TOKEN_URL, data={"grant_type": "client_credentials", "scope": "openid"},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.get_json()["error"] == "invalid_scope"


def test_client_credentials_requires_client_authentication(client, make_client):
    app_client = make_client(grant_types=["client_credentials"])
    resp = client.post(TOKEN_URL, data={"grant_type": "client_credentials", "client_id": app_client.client_id})
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "invalid_client"


def test_client_only_registered_for_client_credentials_cannot_use_code_grant(client, make_client, make_user, get_code):
    app_client = make_client(grant_types=["client_credentials"])
    code, verifier = get_code(app_client, make_user())
    resp = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.get_json()["error"] == "unauthorized_client"
