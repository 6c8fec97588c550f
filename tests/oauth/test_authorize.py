"""SPEC 2.3: GET /index.php/apps/oauth2/authorize, rule by rule."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from extensions import db
from oauth.models import AuthorizationRequest
from tests.conftest import BASE_URL, authorize_url, pkce_pair, query_of

AUTHORIZE = "/index.php/apps/oauth2/authorize"
UNKNOWN_CLIENT_SENTENCE = (
    "Your client is not authorized to connect. Please inform the administrator of your client."
)


def _pending_count(app) -> int:
    with app.app_context():
        return db.session.query(AuthorizationRequest).count()


@pytest.mark.parametrize("query", [{}, {"client_id": "nosuchclientnosuchclient12"}])
def test_missing_or_unknown_client_gets_200_page_with_nextcloud_sentence(app, client, query):
    resp = client.get(AUTHORIZE + "?" + urlencode({**query, "response_type": "code", "state": "x"}))
    assert resp.status_code == 200
    assert resp.mimetype == "text/html"
    assert UNKNOWN_CLIENT_SENTENCE in resp.get_data(as_text=True)
    assert "Location" not in resp.headers
    assert _pending_count(app) == 0


def test_unregistered_redirect_uri_gets_400_page_never_a_redirect(app, client, make_client):
    app_client = make_client()
    resp = client.get(authorize_url(app_client, redirect_uri="https://evil.example.com/cb"))
    assert resp.status_code == 400
    assert resp.mimetype == "text/html"
    assert "Location" not in resp.headers
    assert _pending_count(app) == 0


def test_absent_redirect_uri_with_several_registered_gets_400_page(client, make_client):
    app_client = make_client(redirect_uris=["https://a.example.org/cb", "https://b.example.org/cb"])
    resp = client.get(authorize_url(app_client))
    assert resp.status_code == 400
    assert "Location" not in resp.headers


@pytest.mark.parametrize("param", ["client_id", "redirect_uri"])
def test_duplicated_client_id_or_redirect_uri_gets_400_page(client, make_client, param):
    app_client = make_client()
    query = [
        ("client_id", app_client.client_id),
        ("response_type", "code"),
        ("state", "s"),
        ("redirect_uri", "https://app.example.org/callback"),
        (param, app_client.client_id if param == "client_id" else "https://app.example.org/callback"),
    ]
    resp = client.get(AUTHORIZE + "?" + urlencode(query))
    assert resp.status_code == 400
    assert "Location" not in resp.headers


def _error_of(resp) -> dict:
    assert resp.status_code == 303
    return query_of(resp.headers["Location"])


def test_missing_response_type_redirects_invalid_request_with_state(client, make_client):
    app_client = make_client()
    resp = client.get(AUTHORIZE + "?" + urlencode({"client_id": app_client.client_id, "state": "abc"}))
    params = _error_of(resp)
    assert resp.headers["Location"].startswith("https://app.example.org/callback?")
    assert params["error"] == "invalid_request"
    assert params["state"] == "abc"
    assert params["error_description"]
    assert params["iss"] == BASE_URL


def test_response_type_other_than_code_is_unsupported_response_type(client, make_client):
    app_client = make_client()
    params = _error_of(client.get(authorize_url(app_client, response_type="token")))
    assert params["error"] == "unsupported_response_type"
    assert params["state"] == "st-123"


def test_missing_state_is_invalid_request(client, make_client):
    app_client = make_client()
    resp = client.get(AUTHORIZE + "?" + urlencode({"client_id": app_client.client_id, "response_type": "code"}))
    params = _error_of(resp)
    assert params["error"] == "invalid_request"
    assert "state" not in params


def test_public_client_without_code_challenge_is_invalid_request(client, make_client):
    app_client = make_client(public=True)
    assert _error_of(client.get(authorize_url(app_client)))["error"] == "invalid_request"


@pytest.mark.parametrize(
    "challenge",
    ["short", "a" * 129, "a" * 42 + "!", "x" * 42 + " "],
)
def test_malformed_code_challenge_is_invalid_request(client, make_client, challenge):
    app_client = make_client()
    resp = client.get(authorize_url(app_client, code_challenge=challenge, code_challenge_method="S256"))
    assert _error_of(resp)["error"] == "invalid_request"


@pytest.mark.parametrize("method", [None, "plain", "s256", "S512"])
def test_challenge_method_other_than_s256_or_missing_is_invalid_request(client, make_client, method):
    app_client = make_client()
    _, challenge = pkce_pair()
    resp = client.get(authorize_url(app_client, code_challenge=challenge, code_challenge_method=method))
    assert _error_of(resp)["error"] == "invalid_request"


def test_challenge_method_without_challenge_is_invalid_request(client, make_client):
    app_client = make_client()
    resp = client.get(authorize_url(app_client, code_challenge_method="S256"))
    assert _error_of(resp)["error"] == "invalid_request"


@pytest.mark.parametrize("param", ["response_type", "state", "scope", "code_challenge"])
def test_parameter_sent_twice_is_invalid_request(client, make_client, param):
    app_client = make_client()
    _, challenge = pkce_pair()
    query = [
        ("client_id", app_client.client_id),
        ("response_type", "code"),
        ("state", "s1"),
        ("scope", "profile"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
    query.append((param, dict(query)[param]))
    resp = client.get(AUTHORIZE + "?" + urlencode(query))
    assert _error_of(resp)["error"] == "invalid_request"


def test_unknown_scope_is_invalid_scope(client, make_client):
    app_client = make_client()
    params = _error_of(client.get(authorize_url(app_client, scope="profile openid")))
    assert params["error"] == "invalid_scope"


def test_error_parameters_are_appended_with_ampersand_when_uri_has_a_query(client, make_client):
    app_client = make_client(redirect_uris=["https://app.example.org/cb?tenant=7"])
    resp = client.get(authorize_url(app_client, response_type="token"))
    assert resp.status_code == 303
    assert resp.headers["Location"].startswith("https://app.example.org/cb?tenant=7&error=unsupported_response_type")


def test_valid_request_is_stored_and_redirects_to_login_url(app, client, make_client):
    app_client = make_client()
    resp = client.get(authorize_url(app_client))
    assert resp.status_code == 303
    location = resp.headers["Location"]
    assert location.startswith(f"{BASE_URL}/index.php/login/flow?request=")
    request_id = query_of(location)["request"]
    with app.app_context():
        pending = db.session.get(AuthorizationRequest, request_id)
        assert pending is not None
        assert pending.state == "st-123"
        assert pending.scope == "profile"
        assert 590_000 <= pending.expires_at - pending.create_at <= 600_000


def test_after_consent_redirect_carries_state_first_then_code_and_iss(client, make_client, make_user, get_code):
    # get_code asserts the 303; here we check the exact parameter order on a fresh run.
    from tests.conftest import csrf_from, login

    app_client = make_client()
    user = make_user()
    _, challenge = pkce_pair()
    resp = client.get(authorize_url(app_client, code_challenge=challenge, code_challenge_method="S256"))
    flow = resp.headers["Location"].replace(BASE_URL, "")
    login(client, user.username)
    page = client.get(flow)
    resp = client.post(flow, data={"decision": "allow", "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303
    location = resp.headers["Location"]
    assert location.startswith("https://app.example.org/callback?state=st-123&code=")
    params = query_of(location)
    assert len(params["code"]) >= 43
    assert params["iss"] == BASE_URL


@pytest.mark.parametrize("port", ["", ":1234", ":55555"])
def test_loopback_ip_redirect_uri_matches_on_any_port(client, make_client, port):
    app_client = make_client(redirect_uris=["http://127.0.0.1/cb"])
    resp = client.get(authorize_url(app_client, redirect_uri=f"http://127.0.0.1{port}/cb"))
    assert resp.status_code == 303
    assert "/index.php/login/flow?request=" in resp.headers["Location"]


def test_localhost_redirect_uri_matches_exactly_only(client, make_client):
    app_client = make_client(redirect_uris=["http://localhost:8080/cb"])
    assert client.get(authorize_url(app_client, redirect_uri="http://localhost:9090/cb")).status_code == 400
    assert client.get(authorize_url(app_client, redirect_uri="http://localhost:8080/cb")).status_code == 303


def test_ipv6_loopback_redirect_uri_matches_on_any_port(client, make_client):
    app_client = make_client(redirect_uris=["http://[::1]:80/cb"])
    assert client.get(authorize_url(app_client, redirect_uri="http://[::1]:7777/cb")).status_code == 303
    assert client.get(authorize_url(app_client, redirect_uri="http://[::1]:7777/other")).status_code == 400
