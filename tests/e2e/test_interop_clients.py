"""Real OAuth client libraries, used as their authors intend, complete the code + PKCE S256 +
refresh flow against a real gunicorn (SPEC 2.3-2.5): Authlib's requests client and
openid-client 6 (Node, with RFC 8414 discovery and the RFC 9207 `iss` check). Plus the
RFC 6749 §2.3.1 rule that Basic credentials are form-urlencoded before base64.
"""

from __future__ import annotations

import base64
import json
import secrets
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

import utils
from extensions import db
from oauth.models import Client
from tests.e2e.helpers import AUTHORIZE_PATH, TOKEN_PATH, browser_consent
from tests.live import ROOT

pytestmark = pytest.mark.e2e

REDIRECT = "http://127.0.0.1:9/callback"
NODE_SCRIPT = Path(__file__).parent / "js" / "openid_client_flow.mjs"


def _me(live_server, access_token: str) -> requests.Response:
    return requests.get(live_server.url + "/api/v4/users/me", headers={"Authorization": "Bearer " + access_token},
                        timeout=10)


# --- Authlib ------------------------------------------------------------------------------


@pytest.mark.parametrize("public", [False, True], ids=["confidential_basic", "public_none"])
def test_authlib_client_completes_code_pkce_and_refresh(live_server, make_client, make_user, public):
    app_client = make_client(redirect_uris=[REDIRECT], public=public)
    user = make_user()
    oauth = OAuth2Session(
        app_client.client_id,
        None if public else app_client.secret,
        token_endpoint_auth_method="none" if public else "client_secret_basic",
        scope="profile api",
        redirect_uri=REDIRECT,
        code_challenge_method="S256",
    )
    verifier = generate_token(48)
    url, state = oauth.create_authorization_url(live_server.url + AUTHORIZE_PATH, code_verifier=verifier)
    assert parse_qs(urlsplit(url).query)["code_challenge_method"] == ["S256"]

    callback = browser_consent(live_server, url, user.username)
    params = parse_qs(urlsplit(callback).query)
    assert params["state"] == [state] and params["iss"] == [live_server.url]

    token = oauth.fetch_token(live_server.url + TOKEN_PATH, authorization_response=callback, state=state,
                              code_verifier=verifier)
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert token["user_id"] == user.id and set(token["scope"].split()) == {"profile", "api"}
    me = oauth.get(live_server.url + "/api/v4/users/me")
    assert me.status_code == 200 and me.json()["username"] == user.username

    refreshed = oauth.refresh_token(live_server.url + TOKEN_PATH, refresh_token=token["refresh_token"])
    assert refreshed["refresh_token"] != token["refresh_token"]
    assert refreshed["access_token"] != token["access_token"]
    assert oauth.token["access_token"] == refreshed["access_token"]  # the session took the new token
    assert oauth.get(live_server.url + "/api/v4/users/me").json()["id"] == user.id
    # Rotation (SPEC 2.4): the refresh token the library just used is retired.
    replay = requests.post(live_server.url + TOKEN_PATH, timeout=10,
                           data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"],
                                 **({"client_id": app_client.client_id} if public else {})},
                           auth=None if public else (app_client.client_id, app_client.secret))
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"


# --- openid-client (Node) -----------------------------------------------------------------


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "openid-client").is_dir():
        pytest.fail("node and openid-client are needed: run scripts/bootstrap.sh --test (npm ci)")
    return node


def _run_openid_client(live_server, app_client, auth: str, username: str) -> dict:
    proc = subprocess.Popen(
        [_node(), str(NODE_SCRIPT), live_server.url, app_client.client_id, app_client.secret or "", auth, REDIRECT,
         "profile api"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        first = proc.stdout.readline()
        if not first:
            pytest.fail("openid-client failed before the authorization URL: " + proc.stderr.read())
        authorization_url = json.loads(first)["authorization_url"]
        callback = browser_consent(live_server, authorization_url, username)
        out, err = proc.communicate(callback + "\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    result = json.loads(out)
    result["authorization_url"] = authorization_url
    result["callback"] = callback
    return result


@pytest.mark.parametrize("auth", ["post", "basic", "none"])
def test_openid_client_discovers_and_completes_code_pkce_iss_and_refresh(live_server, make_client, make_user,
                                                                        auth):
    app_client = make_client(redirect_uris=[REDIRECT], public=auth == "none")
    user = make_user()
    result = _run_openid_client(live_server, app_client, auth, user.username)

    assert result["metadata"]["issuer"] == live_server.url
    assert result["metadata"]["token_endpoint"] == live_server.url + TOKEN_PATH
    query = parse_qs(urlsplit(result["authorization_url"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["state"] == [result["state"]]
    callback = parse_qs(urlsplit(result["callback"]).query)
    assert callback["iss"] == [live_server.url]  # authorizationCodeGrant checked it against the metadata

    token, refreshed = result["token"], result["refreshed"]
    assert token["token_type"].lower() == "bearer" and token["expires_in"] == 3600
    assert token["user_id"] == user.id
    assert refreshed["refresh_token"] != token["refresh_token"]
    assert _me(live_server, token["access_token"]).json()["username"] == user.username
    assert _me(live_server, refreshed["access_token"]).json()["username"] == user.username


# --- client_secret_basic encoding (RFC 6749 §2.3.1) ---------------------------------------


def _whatwg_form_encode(value: str) -> str:
    # application/x-www-form-urlencoded as browsers' and Node's URLSearchParams write it:
    # only ALPHA / DIGIT / "*-._" stay, so "~" becomes %7E.
    return quote(value, safe="*-._").replace("~", "%7E")


def _escape_every_symbol(value: str) -> str:
    return "".join(c if c.isalnum() else f"%{ord(c):02X}" for c in value)


@pytest.mark.parametrize(
    "encode",
    [lambda s: s, lambda s: quote(s, safe=""), _whatwg_form_encode, _escape_every_symbol],
    ids=["raw", "urllib_quote", "form_urlencoded_tilde", "every_symbol_escaped"],
)
def test_basic_secret_with_unreserved_symbols_accepted_raw_and_form_urlencoded(live_server, app, make_client,
                                                                               encode):
    app_client = make_client(redirect_uris=[REDIRECT], grant_types=["client_credentials"])
    secret = "a-b_c.d~e" + secrets.token_urlsafe(32)
    with app.app_context():
        row = db.session.execute(db.select(Client).filter_by(client_id=app_client.client_id)).scalar_one()
        row.client_secret_hash = utils.hash_secret(secret)
        db.session.commit()

    def token_with(sent_secret: str) -> requests.Response:
        credentials = f"{quote(app_client.client_id, safe='')}:{sent_secret}".encode()
        return requests.post(live_server.url + TOKEN_PATH, data={"grant_type": "client_credentials"},
                             headers={"Authorization": "Basic " + base64.b64encode(credentials).decode()},
                             timeout=10)

    resp = token_with(encode(secret))
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["token_type"] == "Bearer" and len(body["access_token"]) >= 43 and "refresh_token" not in body

    # The same encoding of a secret that differs in one symbol is refused: the decoding is
    # exact, not lenient.
    wrong = token_with(encode(secret.replace("~", "-", 1)))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
