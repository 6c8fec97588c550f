"""What the e2e tests share: a person's part of the flow done with `requests`."""

from __future__ import annotations

import re

import requests

from tests.conftest import PASSWORD

CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
AUTHORIZE_PATH = "/index.php/apps/oauth2/authorize"
TOKEN_PATH = "/index.php/apps/oauth2/api/v1/token"


def browser_consent(live_server, authorization_url: str, username: str) -> str:
    """What a person does in the browser: sign in, click Allow. Returns the final redirect."""
    browser = requests.Session()
    resp = browser.get(authorization_url, allow_redirects=False)
    assert resp.status_code == 303, resp.text
    flow_url = resp.headers["Location"]
    assert flow_url.startswith(live_server.url + "/index.php/login/flow?request=")
    page = browser.get(flow_url)
    assert page.status_code == 200 and 'name="password"' in page.text
    resp = browser.post(
        live_server.url + "/login",
        data={"username": username, "password": PASSWORD, "next": flow_url.replace(live_server.url, ""),
              "csrf_token": CSRF_RE.search(page.text).group(1)},
        allow_redirects=False,
    )
    assert resp.status_code == 303
    consent = browser.get(flow_url)
    assert consent.status_code == 200 and "Allow" in consent.text
    resp = browser.post(flow_url, data={"decision": "allow", "csrf_token": CSRF_RE.search(consent.text).group(1)},
                        allow_redirects=False)
    assert resp.status_code == 303
    return resp.headers["Location"]
