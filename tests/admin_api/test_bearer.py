"""SPEC 2.6 and 1.3: Bearer tokens at /api/v4."""

from __future__ import annotations

import pytest

from extensions import db
from oauth import services
from oauth.models import Token
from tests.conftest import TOKEN_URL, basic


def _tokens(client, app_client, user, get_code, scope="profile api"):
    code, verifier = get_code(app_client, user, scope=scope)
    resp = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                       headers=basic(app_client.client_id, app_client.secret))
    return resp.get_json()


def _me(client, token):
    return client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {token}"})


def test_users_me_returns_the_user_without_secrets(client, make_client, make_user, get_code):
    user = make_user(first_name="Ada")
    tokens = _tokens(client, make_client(), user, get_code)
    resp = _me(client, tokens["access_token"])
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["id"] == user.id and body["username"] == user.username and body["first_name"] == "Ada"
    assert not any("password" in key for key in body)


def test_missing_token_is_401_with_bearer_challenge(client):
    resp = client.get("/api/v4/users/me")
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="authflow"'
    body = resp.get_json()
    assert body["id"] == "api.context.session_expired.app_error"
    assert body["status_code"] == 401
    assert body["request_id"] == resp.headers["X-Request-Id"]


def test_unknown_token_is_401_invalid_token(client):
    resp = _me(client, "not-a-real-token")
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="authflow", error="invalid_token"'


def test_token_in_query_string_is_not_accepted(client, make_client, make_user, get_code):
    tokens = _tokens(client, make_client(), make_user(), get_code)
    resp = client.get("/api/v4/users/me?access_token=" + tokens["access_token"])
    assert resp.status_code == 401


def test_expired_token_is_401(app, client, make_client, make_user, get_code):
    tokens = _tokens(client, make_client(), make_user(), get_code)
    with app.app_context():
        db.session.execute(db.update(Token).values(access_expires_at=1))
        db.session.commit()
    assert _me(client, tokens["access_token"]).status_code == 401


def test_token_of_deactivated_user_is_401(app, client, make_client, make_user, get_code):
    user = make_user()
    tokens = _tokens(client, make_client(), user, get_code)
    with app.app_context():
        services.deactivate_user(services.get_user(user.id))
        db.session.commit()
    assert _me(client, tokens["access_token"]).status_code == 401


def test_token_of_deleted_client_is_401_and_its_rows_are_gone(app, client, make_client, make_user, get_code):
    app_client = make_client()
    tokens = _tokens(client, app_client, make_user(), get_code)
    with app.app_context():
        services.delete_client(services.get_client(app_client.client_id))
        db.session.commit()
        assert db.session.query(Token).count() == 0
    assert _me(client, tokens["access_token"]).status_code == 401


def test_personal_access_token_acts_for_its_user_and_can_be_revoked(app, client, make_user, make_pat):
    user = make_user()
    pat = make_pat(user)
    resp = _me(client, pat)
    assert resp.status_code == 200 and resp.get_json()["id"] == user.id
    with app.app_context():
        from oauth.models import PersonalAccessToken

        token_id = db.session.scalars(db.select(PersonalAccessToken.id)).one()
        services.revoke_personal_token(token_id)
        db.session.commit()
    assert _me(client, pat).status_code == 401


def test_token_without_api_scope_gets_403_except_users_me(client, make_client, make_user, get_code):
    user = make_user()
    tokens = _tokens(client, make_client(), user, get_code, scope="profile")
    assert _me(client, tokens["access_token"]).status_code == 200
    resp = client.get(f"/api/v4/users/{user.id}", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert resp.status_code == 403
    assert resp.get_json()["id"] == "api.context.permissions.app_error"


def test_token_with_api_scope_acts_with_the_users_roles(client, make_client, make_user, get_code):
    user = make_user()
    tokens = _tokens(client, make_client(), user, get_code, scope="profile api")
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert client.get(f"/api/v4/users/{user.id}", headers=headers).status_code == 200
    # An ordinary user lacks the admin permission to create users.
    resp = client.post("/api/v4/users", json={"username": "x"}, headers=headers)
    assert resp.status_code == 403


@pytest.mark.parametrize("body", ["{bad json", "[]"])
def test_permission_is_checked_before_the_body(client, make_user, make_pat, body):
    pat = make_pat(make_user())
    resp = client.post("/api/v4/users", data=body, content_type="application/json",
                       headers={"Authorization": f"Bearer {pat}"})
    assert resp.status_code == 403
