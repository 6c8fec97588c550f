"""SPEC 2.4: POST /index.php/apps/oauth2/api/v1/token, rule by rule."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from extensions import db
from oauth.models import Token
from tests.conftest import TOKEN_URL, basic, pkce_pair


def _redeem(client, app_client, code, verifier, *, as_json=False, auth="basic", **extra):
    data = {"grant_type": "authorization_code", "code": code, **extra}
    if verifier is not None:
        data["code_verifier"] = verifier
    headers = {}
    if auth == "basic":
        headers.update(basic(app_client.client_id, app_client.secret))
    elif auth == "post":
        data.update(client_id=app_client.client_id, client_secret=app_client.secret)
    elif auth == "none":
        data["client_id"] = app_client.client_id
    if as_json:
        return client.post(TOKEN_URL, data=json.dumps(data), content_type="application/json", headers=headers)
    return client.post(TOKEN_URL, data=data, headers=headers)


def _refresh(client, app_client, refresh_token, **extra):
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, **extra}
    return client.post(TOKEN_URL, data=data, headers=basic(app_client.client_id, app_client.secret))


@pytest.fixture
def confidential(make_client):
    return make_client()


@pytest.fixture
def user(make_user):
    return make_user()


def _assert_error(resp, error: str, status: int = 400):
    assert resp.status_code == status, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["error"] == error
    assert "error_description" in body
    return body


@pytest.mark.parametrize("as_json", [False, True], ids=["form", "json"])
def test_code_grant_accepts_form_and_json_bodies(client, confidential, user, get_code, as_json):
    code, verifier = get_code(confidential, user)
    resp = _redeem(client, confidential, code, verifier, as_json=as_json)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["user_id"] == user.id
    assert body["scope"] == "profile"
    assert len(body["access_token"]) >= 43 and len(body["refresh_token"]) >= 43
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["Pragma"] == "no-cache"


def test_client_secret_post_authenticates(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    assert _redeem(client, confidential, code, verifier, auth="post").status_code == 200


def test_basic_and_post_credentials_at_once_is_invalid_request(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    resp = client.post(
        TOKEN_URL,
        data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
              "client_id": confidential.client_id, "client_secret": confidential.secret},
        headers=basic(confidential.client_id, confidential.secret),
    )
    _assert_error(resp, "invalid_request")


def test_failed_basic_login_is_401_with_basic_challenge(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    confidential.secret = "wrong-secret"
    resp = _redeem(client, confidential, code, verifier)
    _assert_error(resp, "invalid_client", 401)
    assert resp.headers["WWW-Authenticate"].startswith('Basic realm="authflow"')


def test_failed_client_secret_post_is_400_invalid_client(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    confidential.secret = "wrong-secret"
    resp = _redeem(client, confidential, code, verifier, auth="post")
    _assert_error(resp, "invalid_client", 400)
    assert "WWW-Authenticate" not in resp.headers


def test_confidential_client_without_secret_is_invalid_client(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    _assert_error(_redeem(client, confidential, code, verifier, auth="none"), "invalid_client")


def test_basic_credentials_are_form_urldecoded(client, make_user, get_code, app):
    """RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic encoding."""
    from oauth import services
    from utils import hash_secret

    app_client = None
    with app.app_context():
        row, _ = services.create_client("Enc", ["https://app.example.org/callback"])
        row.client_secret_hash = hash_secret("se cret/+:~.-_")
        db.session.commit()
        db.session.refresh(row)
        db.session.expunge(row)
        app_client = row
    user = make_user()
    code, verifier = get_code(app_client, user)
    app_client.secret = quote("se cret/+:~.-_", safe="")
    assert _redeem(client, app_client, code, verifier).status_code == 200


def test_public_client_sends_only_client_id_and_must_use_pkce(client, make_client, user, get_code):
    public = make_client(public=True)
    code, verifier = get_code(public, user)
    resp = _redeem(client, public, code, verifier, auth="none")
    assert resp.status_code == 200, resp.get_data(as_text=True)


def test_public_client_with_basic_and_empty_secret_is_identified_by_id(client, make_client, user, get_code):
    public = make_client(public=True)
    code, verifier = get_code(public, user)
    public.secret = ""
    assert _redeem(client, public, code, verifier, auth="basic").status_code == 200


def test_bearer_authorization_header_is_ignored_at_token_endpoint(client, make_client, user, get_code):
    public = make_client(public=True)
    code, verifier = get_code(public, user)
    resp = client.post(
        TOKEN_URL,
        data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "client_id": public.client_id},
        headers={"Authorization": "Bearer something"},
    )
    assert resp.status_code == 200


def test_missing_code_is_invalid_request(client, confidential):
    resp = client.post(TOKEN_URL, data={"grant_type": "authorization_code"},
                       headers=basic(confidential.client_id, confidential.secret))
    _assert_error(resp, "invalid_request")


def test_missing_grant_type_is_invalid_request(client, confidential):
    resp = client.post(TOKEN_URL, data={"code": "x"}, headers=basic(confidential.client_id, confidential.secret))
    _assert_error(resp, "invalid_request")


def test_unknown_grant_type_is_unsupported_grant_type(client, confidential):
    resp = client.post(TOKEN_URL, data={"grant_type": "password", "username": "a", "password": "b"},
                       headers=basic(confidential.client_id, confidential.secret))
    _assert_error(resp, "unsupported_grant_type")


def test_duplicated_parameter_is_invalid_request(client, confidential):
    resp = client.post(
        TOKEN_URL,
        data="grant_type=authorization_code&code=a&code=b",
        content_type="application/x-www-form-urlencoded",
        headers=basic(confidential.client_id, confidential.secret),
    )
    _assert_error(resp, "invalid_request")


@pytest.mark.parametrize("body", ["{not json", "[1,2]", '{"grant_type": 5}', '"str"'])
def test_malformed_json_body_is_invalid_request(client, body):
    resp = client.post(TOKEN_URL, data=body, content_type="application/json")
    _assert_error(resp, "invalid_request")


def test_redirect_uri_must_be_sent_and_equal_when_authorize_carried_it(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user, redirect_uri="https://app.example.org/callback")
    _assert_error(_redeem(client, confidential, code, verifier), "invalid_grant")
    code, verifier = get_code(confidential, user, redirect_uri="https://app.example.org/callback")
    _assert_error(_redeem(client, confidential, code, verifier, redirect_uri="https://app.example.org/other"), "invalid_grant")
    code, verifier = get_code(confidential, user, redirect_uri="https://app.example.org/callback")
    resp = _redeem(client, confidential, code, verifier, redirect_uri="https://app.example.org/callback")
    assert resp.status_code == 200


def test_missing_or_wrong_code_verifier_is_invalid_grant(client, confidential, user, get_code):
    code, _ = get_code(confidential, user)
    _assert_error(_redeem(client, confidential, code, None), "invalid_grant")
    wrong, _ = pkce_pair()
    _assert_error(_redeem(client, confidential, code, wrong), "invalid_grant")


def test_code_verifier_for_code_without_challenge_is_invalid_request(client, confidential, user, get_code):
    code, _ = get_code(confidential, user, pkce=False)
    verifier, _ = pkce_pair()
    _assert_error(_redeem(client, confidential, code, verifier), "invalid_request")


def test_confidential_client_without_pkce_still_works_by_default(client, confidential, user, get_code):
    code, _ = get_code(confidential, user, pkce=False)
    assert _redeem(client, confidential, code, None).status_code == 200


def test_code_used_twice_is_invalid_grant_and_revokes_its_tokens(app, client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    first = _redeem(client, confidential, code, verifier)
    assert first.status_code == 200
    access = first.get_json()["access_token"]
    assert client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {access}"}).status_code == 200
    _assert_error(_redeem(client, confidential, code, verifier), "invalid_grant")
    assert client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {access}"}).status_code == 401
    refresh = first.get_json()["refresh_token"]
    _assert_error(_refresh(client, confidential, refresh), "invalid_grant")


def test_replay_with_invalid_parameters_revokes_nothing(client, make_client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    first = _redeem(client, confidential, code, verifier)
    access = first.get_json()["access_token"]
    other = make_client(name="Other")
    _assert_error(_redeem(client, other, code, verifier), "invalid_grant")  # wrong client
    wrong, _ = pkce_pair()
    _assert_error(_redeem(client, confidential, code, wrong), "invalid_grant")  # wrong verifier
    assert client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {access}"}).status_code == 200


def test_code_issued_to_another_client_is_invalid_grant(client, make_client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    other = make_client(name="Other")
    _assert_error(_redeem(client, other, code, verifier), "invalid_grant")
    assert _redeem(client, confidential, code, verifier).status_code == 200


def test_expired_code_is_invalid_grant(app, client, confidential, user, get_code):
    from oauth.models import AuthorizationCode

    code, verifier = get_code(confidential, user)
    with app.app_context():
        db.session.execute(db.update(AuthorizationCode).values(expires_at=1))
        db.session.commit()
    _assert_error(_redeem(client, confidential, code, verifier), "invalid_grant")


def test_code_is_never_accepted_as_refresh_token_nor_the_reverse(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    _assert_error(_refresh(client, confidential, code), "invalid_grant")
    tokens = _redeem(client, confidential, code, verifier).get_json()
    _assert_error(_redeem(client, confidential, tokens["refresh_token"], verifier), "invalid_grant")
    _assert_error(_redeem(client, confidential, tokens["access_token"], verifier), "invalid_grant")


def test_refresh_rotates_and_retires_the_old_refresh_token(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    first = _redeem(client, confidential, code, verifier).get_json()
    second = _refresh(client, confidential, first["refresh_token"])
    assert second.status_code == 200
    body = second.get_json()
    assert body["refresh_token"] != first["refresh_token"]
    assert body["access_token"] != first["access_token"]
    assert body["user_id"] == user.id
    third = _refresh(client, confidential, body["refresh_token"])
    assert third.status_code == 200


def test_retired_refresh_token_reuse_revokes_the_whole_family(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    first = _redeem(client, confidential, code, verifier).get_json()
    second = _refresh(client, confidential, first["refresh_token"]).get_json()
    _assert_error(_refresh(client, confidential, first["refresh_token"]), "invalid_grant")
    _assert_error(_refresh(client, confidential, second["refresh_token"]), "invalid_grant")
    me = client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {second['access_token']}"})
    assert me.status_code == 401


def test_refresh_token_of_another_client_is_invalid_grant(client, make_client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    tokens = _redeem(client, confidential, code, verifier).get_json()
    other = make_client(name="Other")
    _assert_error(_refresh(client, other, tokens["refresh_token"]), "invalid_grant")
    assert _refresh(client, confidential, tokens["refresh_token"]).status_code == 200


def test_expired_refresh_token_is_invalid_grant(app, client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    tokens = _redeem(client, confidential, code, verifier).get_json()
    with app.app_context():
        db.session.execute(db.update(Token).values(refresh_expires_at=1))
        db.session.commit()
    _assert_error(_refresh(client, confidential, tokens["refresh_token"]), "invalid_grant")


def test_refresh_may_narrow_scope_but_not_widen_it(client, confidential, user, get_code):
    code, verifier = get_code(confidential, user, scope="profile api")
    tokens = _redeem(client, confidential, code, verifier).get_json()
    assert tokens["scope"] == "profile api"
    narrowed = _refresh(client, confidential, tokens["refresh_token"], scope="profile")
    assert narrowed.status_code == 200
    assert narrowed.get_json()["scope"] == "profile"
    # The new refresh token keeps the original grant: asking for api again is allowed.
    again = _refresh(client, confidential, narrowed.get_json()["refresh_token"], scope="profile api")
    assert again.get_json()["scope"] == "profile api"
    _assert_error(_refresh(client, confidential, again.get_json()["refresh_token"], scope="profile api offline_access openid"),
                  "invalid_scope")


def test_deactivated_user_cannot_redeem_or_refresh(app, client, confidential, user, get_code):
    from oauth import services

    code, verifier = get_code(confidential, user)
    tokens = _redeem(client, confidential, code, verifier).get_json()
    with app.app_context():
        services.deactivate_user(services.get_user(user.id))
        db.session.commit()
    _assert_error(_refresh(client, confidential, tokens["refresh_token"]), "invalid_grant")


def test_tokens_expire_after_configured_lifetimes(app, client, confidential, user, get_code):
    code, verifier = get_code(confidential, user)
    _redeem(client, confidential, code, verifier)
    with app.app_context():
        row = db.session.scalars(db.select(Token)).one()
        assert row.access_expires_at - row.issued_at == 3600 * 1000
        assert row.refresh_expires_at - row.issued_at == 30 * 24 * 3600 * 1000


def test_database_failure_answers_500_text_plain_without_trace(app, client, confidential, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from oauth import services

    def boom(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("database is down"))

    monkeypatch.setattr(services, "find_client", boom)
    resp = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": "x"},
                       headers=basic(confidential.client_id, confidential.secret))
    assert resp.status_code == 500
    assert resp.mimetype == "text/plain"
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text and "database is down" not in text


def test_token_endpoint_refuses_plain_http_off_loopback(client, confidential):
    """Secure by default: behind a TLS proxy set AUTHFLOW_TRUSTED_PROXIES so the scheme is https."""
    resp = client.post(TOKEN_URL, base_url="http://auth.example.org", data={"grant_type": "client_credentials"},
                       headers=basic(confidential.client_id, confidential.secret))
    _assert_error(resp, "insecure_transport")
    ok = client.post(TOKEN_URL, base_url="https://auth.example.org", data={"grant_type": "client_credentials"},
                     headers=basic(confidential.client_id, confidential.secret))
    assert ok.get_json()["error"] == "unauthorized_client"
