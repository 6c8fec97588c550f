"""The whole flow against a real gunicorn with a real OAuth client library (requests-oauthlib,
PKCE S256): authorize → login → consent → code → token → refresh → users/me. Plus the
"exactly once" rules under real concurrency across worker processes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from requests_oauthlib import OAuth2Session

from tests.conftest import pkce_pair
from tests.e2e.helpers import browser_consent

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _plain_http_on_loopback(monkeypatch):
    # oauthlib refuses http:// unless told; the servers here are on loopback only.
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


REDIRECT = "http://127.0.0.1:9/callback"


@pytest.mark.parametrize("public", [False, True], ids=["confidential", "public"])
def test_full_flow_with_requests_oauthlib_pkce(live_server, make_client, make_user, public):
    app_client = make_client(redirect_uris=[REDIRECT], public=public)
    user = make_user()
    oauth = OAuth2Session(app_client.client_id, redirect_uri=REDIRECT, scope=["profile", "api"], pkce="S256")
    authorization_url, state = oauth.authorization_url(live_server.url + "/index.php/apps/oauth2/authorize")
    callback = browser_consent(live_server, authorization_url, user.username)
    params = parse_qs(urlsplit(callback).query)
    assert params["state"] == [state]
    assert params["iss"] == [live_server.url]

    token_url = live_server.url + "/index.php/apps/oauth2/api/v1/token"
    secret = app_client.secret if not public else None
    token = oauth.fetch_token(token_url, authorization_response=callback, client_secret=secret,
                              include_client_id=public)
    assert token["token_type"] == "Bearer" and token["user_id"] == user.id

    me = oauth.get(live_server.url + "/api/v4/users/me")
    assert me.status_code == 200 and me.json()["username"] == user.username
    assert "password" not in me.text

    if public:
        refreshed = oauth.refresh_token(token_url, refresh_token=token["refresh_token"],
                                        client_id=app_client.client_id, include_client_id=True)
    else:
        refreshed = oauth.refresh_token(token_url, refresh_token=token["refresh_token"],
                                        auth=(app_client.client_id, secret))
    assert refreshed["refresh_token"] != token["refresh_token"]
    me = requests.get(live_server.url + "/api/v4/users/me",
                      headers={"Authorization": "Bearer " + refreshed["access_token"]})
    assert me.status_code == 200


def _code_for(live_server, app_client, user) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    oauth = OAuth2Session(app_client.client_id, redirect_uri=REDIRECT)
    url, _ = oauth.authorization_url(live_server.url + "/index.php/apps/oauth2/authorize",
                                     code_challenge=challenge, code_challenge_method="S256")
    callback = browser_consent(live_server, url, user.username)
    return parse_qs(urlsplit(callback).query)["code"][0], verifier


def _parallel(n, fn):
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: fn(), range(n)))


def test_concurrent_redemptions_of_one_code_give_exactly_one_200(live_server, make_client, make_user):
    app_client = make_client(redirect_uris=[REDIRECT])
    code, verifier = _code_for(live_server, app_client, make_user())
    token_url = live_server.url + "/index.php/apps/oauth2/api/v1/token"

    def redeem():
        return requests.post(token_url, data={"grant_type": "authorization_code", "code": code,
                                              "code_verifier": verifier, "redirect_uri": REDIRECT},
                             auth=(app_client.client_id, app_client.secret), timeout=30)

    results = _parallel(12, redeem)
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(200) == 1, statuses
    assert all(s == 400 for s in statuses if s != 200), statuses
    assert all(r.json()["error"] == "invalid_grant" for r in results if r.status_code == 400)


def test_concurrent_refreshes_of_one_token_give_exactly_one_200(live_server, make_client, make_user):
    app_client = make_client(redirect_uris=[REDIRECT])
    code, verifier = _code_for(live_server, app_client, make_user())
    token_url = live_server.url + "/index.php/apps/oauth2/api/v1/token"
    auth = (app_client.client_id, app_client.secret)
    first = requests.post(token_url, data={"grant_type": "authorization_code", "code": code,
                                           "code_verifier": verifier, "redirect_uri": REDIRECT}, auth=auth).json()

    def refresh():
        return requests.post(token_url, data={"grant_type": "refresh_token",
                                              "refresh_token": first["refresh_token"]}, auth=auth, timeout=30)

    statuses = sorted(r.status_code for r in _parallel(12, refresh))
    assert statuses.count(200) == 1, statuses
    assert all(s == 400 for s in statuses if s != 200), statuses
