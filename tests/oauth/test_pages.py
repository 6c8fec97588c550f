"""SPEC 2.2 and 8.6: the login and consent pages."""

from __future__ import annotations

import pytest

from tests.conftest import BASE_URL, PASSWORD, authorize_url, csrf_from, login, pkce_pair, query_of

SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _start(client, app_client):
    _, challenge = pkce_pair()
    resp = client.get(authorize_url(app_client, code_challenge=challenge, code_challenge_method="S256",
                                    scope="profile api"))
    return resp.headers["Location"].replace(BASE_URL, "")


@pytest.mark.parametrize("path", ["/login", "/", "/index.php/apps/oauth2/authorize"])
def test_html_pages_send_security_headers(client, path):
    resp = client.get(path)
    assert resp.mimetype == "text/html"
    for key, value in SECURITY_HEADERS.items():
        assert resp.headers[key] == value
    assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]


def test_login_url_shows_login_form_first_when_signed_out(client, make_client):
    flow = _start(client, make_client(name="Photo Printer"))
    page = client.get(flow)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'name="password"' in html and "Photo Printer" in html and 'name="csrf_token"' in html


def test_successful_login_is_303_to_next_and_sets_httponly_lax_cookie(client, make_user):
    user = make_user()
    page = client.get("/login")
    resp = client.post("/login", data={"username": user.username, "password": PASSWORD, "next": "/somewhere?x=1",
                                       "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303
    assert resp.headers["Location"] == "/somewhere?x=1"
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_session_cookie_is_secure_over_https(client, make_user):
    user = make_user()
    page = client.get("/login", base_url="https://localhost")
    resp = client.post("/login", base_url="https://localhost",
                       data={"username": user.username, "password": PASSWORD, "next": "/",
                             "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303
    assert "Secure" in resp.headers["Set-Cookie"]


def test_login_accepts_email_case_insensitively(client, make_user):
    user = make_user()
    page = client.get("/login")
    resp = client.post("/login", data={"username": user.email.upper(), "password": PASSWORD, "next": "/",
                                       "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303


@pytest.mark.parametrize("username_kind", ["existing", "unknown"])
def test_failed_login_is_401_with_generic_message(client, make_user, username_kind):
    user = make_user()
    name = user.username if username_kind == "existing" else "nobody-here"
    page = client.get("/login")
    resp = client.post("/login", data={"username": name, "password": "wrong password!", "next": "/",
                                       "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 401
    html = resp.get_data(as_text=True)
    assert "The username or password is incorrect." in html
    assert 'name="password"' in html
    assert "Set-Cookie" not in resp.headers or "uid" not in resp.headers.get("Set-Cookie", "")


def test_login_without_csrf_token_is_refused(client, make_user):
    user = make_user()
    resp = client.post("/login", data={"username": user.username, "password": PASSWORD, "next": "/"})
    assert resp.status_code == 400
    assert "Location" not in resp.headers


@pytest.mark.parametrize("target", ["https://evil.example.com/", "//evil.example.com/x", "/\\evil.example.com", "javascript:alert(1)"])
def test_next_follows_only_same_origin_paths(client, make_user, target):
    user = make_user()
    page = client.get("/login")
    resp = client.post("/login", data={"username": user.username, "password": PASSWORD, "next": target,
                                       "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303
    assert resp.headers["Location"] == "/"


def test_consent_page_shows_client_redirect_host_scopes_and_two_buttons(client, make_client, make_user):
    app_client = make_client(name="Photo Printer", redirect_uris=["https://photos.example.net/cb"])
    flow = _start(client, app_client)
    login(client, make_user().username)
    html = client.get(flow).get_data(as_text=True)
    assert "Photo Printer" in html and "photos.example.net" in html
    assert 'value="allow"' in html and 'value="deny"' in html
    assert "admin API" in html  # the api scope is described


def test_deny_redirects_303_with_access_denied_and_state(client, make_client, make_user):
    app_client = make_client()
    flow = _start(client, app_client)
    login(client, make_user().username)
    page = client.get(flow)
    resp = client.post(flow, data={"decision": "deny", "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 303
    params = query_of(resp.headers["Location"])
    assert params["error"] == "access_denied" and params["state"] == "st-123" and "code" not in params


def test_consent_without_csrf_token_is_refused(client, make_client, make_user):
    app_client = make_client()
    flow = _start(client, app_client)
    login(client, make_user().username)
    resp = client.post(flow, data={"decision": "allow"})
    assert resp.status_code == 400
    assert "Location" not in resp.headers


def test_consent_decision_is_bound_to_the_stored_request(client, make_client, make_user):
    """Extra form fields change nothing, and a request can be decided once only."""
    app_client = make_client()
    flow = _start(client, app_client)
    login(client, make_user().username)
    token = csrf_from(client.get(flow).get_data(as_text=True))
    resp = client.post(flow, data={"decision": "allow", "csrf_token": token,
                                   "redirect_uri": "https://evil.example.com/", "state": "forged", "scope": "api"})
    assert resp.status_code == 303
    location = resp.headers["Location"]
    assert location.startswith("https://app.example.org/callback?state=st-123&code=")
    again = client.post(flow, data={"decision": "allow", "csrf_token": token})
    assert again.status_code == 400
    assert "Location" not in again.headers


def test_trusted_client_skips_consent(client, make_client, make_user):
    app_client = make_client(trusted=True)
    flow = _start(client, app_client)
    login(client, make_user().username)
    resp = client.get(flow)
    assert resp.status_code == 303
    assert "code" in query_of(resp.headers["Location"])


def test_unknown_or_expired_request_id_gets_error_page(client):
    resp = client.get("/index.php/login/flow?request=doesnotexist")
    assert resp.status_code == 400
    assert resp.mimetype == "text/html"


def test_values_shown_on_pages_are_escaped(client, make_client, make_user):
    app_client = make_client(name='<script>alert("x")</script>')
    flow = _start(client, app_client)
    html = client.get(flow).get_data(as_text=True)
    assert '<script>alert("x")</script>' not in html
    assert "&lt;script&gt;" in html


def test_logout_ends_the_session(client, make_user):
    user = make_user()
    login(client, user.username)
    home = client.get("/").get_data(as_text=True)
    assert user.username in home
    resp = client.post("/logout", data={"csrf_token": csrf_from(home)})
    assert resp.status_code == 303
    assert user.username not in client.get("/").get_data(as_text=True)


def test_password_change_ends_existing_sessions(app, client, make_user):
    from extensions import db
    from oauth import services

    user = make_user()
    login(client, user.username)
    assert user.username in client.get("/").get_data(as_text=True)
    with app.app_context():
        services.set_password(services.get_user(user.id), "a brand new password")
        db.session.commit()
    assert user.username not in client.get("/").get_data(as_text=True)


def test_login_upgrades_a_password_hash_made_with_older_parameters(app, client, make_user):
    from argon2 import PasswordHasher

    from extensions import db
    from oauth import services

    user = make_user()
    old_hash = PasswordHasher(time_cost=1, memory_cost=512, parallelism=1).hash(PASSWORD)
    with app.app_context():
        services.get_user(user.id).password_hash = old_hash
        db.session.commit()
    assert login(client, user.username).status_code == 303
    with app.app_context():
        new_hash = services.get_user(user.id).password_hash
    assert new_hash != old_hash and "m=1024" in new_hash
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    assert login(client, user.username).status_code == 303
