"""A real browser (Debian's chromium through Playwright) on the login URL (SPEC 2.2/2.3):
sign in, see the consent page naming the client, Allow → the redirect URI gets state, code
and iss; Deny → error=access_denied. The redirect URI is a tiny HTTP server on loopback that
records what the browser asked for.
"""

from __future__ import annotations

import http.server
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from playwright.sync_api import sync_playwright

from tests.conftest import PASSWORD, pkce_pair
from tests.e2e.helpers import AUTHORIZE_PATH, TOKEN_PATH

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    # Belt and braces for "only loopback traffic": no name resolves but 127.0.0.1.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
# "<&>" checks that the name is escaped and shown as text (SPEC 2.2).
CLIENT_NAME = 'Photo Print <&> "Co"'


class _Recorder(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        if self.path != "/favicon.ico":  # the browser asks for it on its own
            self.server.requests.append(self.path)
        body = b"<!doctype html><title>callback</title><p id='done'>callback received</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def callback_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield context.new_page()
    context.close()


def _sign_in_to_consent(page, live_server, callback_server, make_client, make_user):
    """Open the authorize URL, sign in on the login form; returns (client, user, verifier, redirect)."""
    redirect = f"http://127.0.0.1:{callback_server.server_port}/callback"
    app_client = make_client(redirect_uris=[redirect], name=CLIENT_NAME)
    user = make_user()
    verifier, challenge = pkce_pair()
    query = {"client_id": app_client.client_id, "response_type": "code", "state": "st-browser",
             "redirect_uri": redirect, "scope": "profile", "code_challenge": challenge,
             "code_challenge_method": "S256"}
    page.goto(live_server.url + AUTHORIZE_PATH + "?" + urlencode(query))
    assert page.url.startswith(live_server.url + "/index.php/login/flow?request=")
    page.fill("#username", user.username)
    page.fill("#password", PASSWORD)
    page.click("#login-submit")
    page.wait_for_selector("#allow")
    return app_client, user, verifier, redirect


def test_browser_signs_in_sees_consent_and_allow_lands_on_redirect_with_code(
    live_server, callback_server, page, make_client, make_user, tmp_path
):
    app_client, user, verifier, redirect = _sign_in_to_consent(page, live_server, callback_server, make_client,
                                                               make_user)
    assert page.inner_text("#client-name") == CLIENT_NAME
    assert page.inner_text("#redirect-host") == urlsplit(redirect).netloc
    assert user.username in page.inner_text("body")
    page.screenshot(path=str(tmp_path / "consent.png"), full_page=True)

    with page.expect_navigation(url=redirect + "?*"):
        page.click("#allow")
    assert page.inner_text("#done") == "callback received"
    assert len(callback_server.requests) == 1
    recorded = urlsplit(callback_server.requests[0])
    assert recorded.path == "/callback"
    params = parse_qs(recorded.query)
    assert recorded.query.startswith("state=st-browser&code=")  # SPEC 2.3: state first
    assert params["iss"] == [live_server.url] and "error" not in params

    # The code the browser carried is a real one: it buys a token for this user.
    token = requests.post(live_server.url + TOKEN_PATH, timeout=10, auth=(app_client.client_id, app_client.secret),
                          data={"grant_type": "authorization_code", "code": params["code"][0],
                                "redirect_uri": redirect, "code_verifier": verifier})
    assert token.status_code == 200, token.text
    assert token.json()["user_id"] == user.id


def test_browser_deny_lands_on_redirect_with_access_denied(live_server, callback_server, page, make_client,
                                                           make_user):
    _, _, _, redirect = _sign_in_to_consent(page, live_server, callback_server, make_client, make_user)
    with page.expect_navigation(url=redirect + "?*"):
        page.click("#deny")
    assert page.inner_text("#done") == "callback received"
    assert len(callback_server.requests) == 1
    params = parse_qs(urlsplit(callback_server.requests[0]).query)
    assert params["error"] == ["access_denied"]
    assert params["state"] == ["st-browser"] and params["iss"] == [live_server.url]
    assert "code" not in params
