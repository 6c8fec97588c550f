"""SPEC 2.5 and 8.4: RFC 8414 metadata, RFC 7009 revocation, RFC 7662 introspection, RFC 9207."""

from __future__ import annotations

import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from tests.conftest import BASE_URL, TOKEN_URL, authorize_url, basic, query_of

REVOKE_URL = "/index.php/apps/oauth2/api/v1/revoke"
INTROSPECT_URL = "/index.php/apps/oauth2/api/v1/introspect"
METADATA_URL = "/.well-known/oauth-authorization-server"


@pytest.fixture
def issued(client, make_client, make_user, get_code):
    app_client = make_client()
    user = make_user()
    code, verifier = get_code(app_client, user, scope="profile api")
    tokens = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                         headers=basic(app_client.client_id, app_client.secret)).get_json()
    return app_client, user, tokens


def _me(client, access):
    return client.get("/api/v4/users/me", headers={"Authorization": f"Bearer {access}"}).status_code


def test_metadata_is_valid_rfc8414_and_issuer_comes_from_configuration(client):
    resp = client.get(METADATA_URL, headers={"Host": "attacker.example.com"})
    assert resp.status_code == 200
    doc = resp.get_json()
    AuthorizationServerMetadata(doc).validate()
    assert doc["issuer"] == BASE_URL
    assert doc["authorization_endpoint"] == BASE_URL + "/index.php/apps/oauth2/authorize"
    assert doc["token_endpoint"] == BASE_URL + TOKEN_URL
    assert doc["revocation_endpoint"] == BASE_URL + REVOKE_URL
    assert doc["introspection_endpoint"] == BASE_URL + INTROSPECT_URL
    assert doc["authorization_response_iss_parameter_supported"] is True


def test_metadata_advertises_nothing_disabled(client):
    doc = client.get(METADATA_URL).get_json()
    assert doc["response_types_supported"] == ["code"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert "password" not in doc["grant_types_supported"] and "implicit" not in doc["grant_types_supported"]
    assert "openid" not in doc["scopes_supported"]


def test_every_endpoint_named_in_metadata_answers(client):
    doc = client.get(METADATA_URL).get_json()
    for key in ("token_endpoint", "revocation_endpoint", "introspection_endpoint"):
        resp = client.post(doc[key].replace(BASE_URL, ""), data={})
        assert resp.status_code in (400, 401), key
        assert resp.get_json()["error"]
    resp = client.get(doc["authorization_endpoint"].replace(BASE_URL, ""))
    assert resp.status_code == 200  # no client: the "not authorized" page


def test_error_redirects_carry_iss(client, make_client):
    resp = client.get(authorize_url(make_client(), response_type="token"))
    assert query_of(resp.headers["Location"])["iss"] == BASE_URL


def test_revoking_access_token_makes_it_inactive(client, issued):
    app_client, _, tokens = issued
    resp = client.post(REVOKE_URL, data={"token": tokens["access_token"]}, headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 200
    assert _me(client, tokens["access_token"]) == 401


def test_revoking_refresh_token_revokes_its_access_tokens(client, issued):
    app_client, _, tokens = issued
    resp = client.post(REVOKE_URL, data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token"},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 200
    assert _me(client, tokens["access_token"]) == 401
    refreshed = client.post(TOKEN_URL, data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                            headers=basic(app_client.client_id, app_client.secret))
    assert refreshed.get_json()["error"] == "invalid_grant"


def test_revoking_unknown_token_is_200(client, issued):
    app_client, _, _ = issued
    resp = client.post(REVOKE_URL, data={"token": "no-such-token"}, headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 200


def test_revoking_another_clients_token_is_200_and_leaves_it_active(client, make_client, issued):
    _, _, tokens = issued
    other = make_client(name="Other")
    resp = client.post(REVOKE_URL, data={"token": tokens["access_token"]}, headers=basic(other.client_id, other.secret))
    assert resp.status_code == 200
    assert _me(client, tokens["access_token"]) == 200


@pytest.mark.parametrize("url", [REVOKE_URL, INTROSPECT_URL])
@pytest.mark.parametrize("data", [{}, {"token": ""}])
def test_empty_or_missing_token_is_invalid_request(client, issued, url, data):
    app_client, _, _ = issued
    resp = client.post(url, data=data, headers=basic(app_client.client_id, app_client.secret))
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "invalid_request"


@pytest.mark.parametrize("url", [REVOKE_URL, INTROSPECT_URL])
def test_revocation_and_introspection_require_client_authentication(client, issued, url):
    app_client, _, tokens = issued
    resp = client.post(url, data={"token": tokens["access_token"]}, headers=basic(app_client.client_id, "wrong"))
    assert resp.status_code == 401
    assert resp.get_json()["error"] == "invalid_client"


def test_introspection_of_active_access_token(client, issued):
    app_client, user, tokens = issued
    body = client.post(INTROSPECT_URL, data={"token": tokens["access_token"]},
                       headers=basic(app_client.client_id, app_client.secret)).get_json()
    assert body["active"] is True
    assert body["client_id"] == app_client.client_id
    assert body["user_id"] == user.id and body["username"] == user.username
    assert body["scope"] == "profile api"
    assert body["token_type"] == "Bearer"
    assert body["exp"] - body["iat"] == 3600


def test_introspection_of_refresh_token_says_refresh_token(client, issued):
    app_client, _, tokens = issued
    body = client.post(INTROSPECT_URL, data={"token": tokens["refresh_token"]},
                       headers=basic(app_client.client_id, app_client.secret)).get_json()
    assert body["active"] is True and body["token_type"] == "refresh_token"


def test_introspection_of_another_clients_token_is_inactive(client, make_client, issued):
    _, _, tokens = issued
    other = make_client(name="Other")
    body = client.post(INTROSPECT_URL, data={"token": tokens["access_token"]},
                       headers=basic(other.client_id, other.secret)).get_json()
    assert body == {"active": False}


def test_introspection_of_revoked_or_unknown_token_is_inactive(client, issued):
    app_client, _, tokens = issued
    auth = basic(app_client.client_id, app_client.secret)
    client.post(REVOKE_URL, data={"token": tokens["access_token"]}, headers=auth)
    assert client.post(INTROSPECT_URL, data={"token": tokens["access_token"]}, headers=auth).get_json() == {"active": False}
    assert client.post(INTROSPECT_URL, data={"token": "nope"}, headers=auth).get_json() == {"active": False}


def test_introspection_accepts_json_body(client, issued):
    app_client, _, tokens = issued
    resp = client.post(INTROSPECT_URL, json={"token": tokens["access_token"]},
                       headers=basic(app_client.client_id, app_client.secret))
    assert resp.get_json()["active"] is True
