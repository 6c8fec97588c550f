"""SPEC 2.7, 8.1, 8.21: brute-force throttling counted in the database."""

from __future__ import annotations

import pytest

from extensions import db
from oauth.models import AuthFailure
from tests.conftest import PASSWORD, TOKEN_URL, basic, csrf_from


def _login(client, username, password, ip="10.0.0.1"):
    page = client.get("/login")
    return client.post("/login", environ_base={"REMOTE_ADDR": ip},
                       data={"username": username, "password": password, "next": "/",
                             "csrf_token": csrf_from(page.get_data(as_text=True))})


def _token_attempt(client, app_client, secret, ip="10.0.0.2"):
    return client.post(TOKEN_URL, data={"grant_type": "client_credentials"}, environ_base={"REMOTE_ADDR": ip},
                       headers=basic(app_client.client_id, secret))


def test_eleventh_failed_login_from_an_ip_gets_429_even_with_right_password(client, make_user):
    user = make_user()
    for _ in range(10):
        assert _login(client, user.username, "wrong-password").status_code == 401
    resp = _login(client, user.username, PASSWORD)
    assert resp.status_code == 429
    assert int(resp.headers["Retry-After"]) > 0
    assert resp.mimetype == "text/html"
    # Another IP is not affected.
    assert _login(client, user.username, PASSWORD, ip="10.9.9.9").status_code == 303


def test_failed_client_authentications_share_the_ip_counter_and_get_rfc_429(client, make_client, make_user):
    app_client = make_client(grant_types=["client_credentials"])
    user = make_user()
    for _ in range(5):
        _login(client, user.username, "wrong-password", ip="10.0.0.3")
    for _ in range(5):
        assert _token_attempt(client, app_client, "wrong", ip="10.0.0.3").status_code == 401
    resp = _token_attempt(client, app_client, app_client.secret, ip="10.0.0.3")
    assert resp.status_code == 429
    assert resp.get_json() == {"error": "temporarily_unavailable", "error_description": "too many failed attempts"}
    assert int(resp.headers["Retry-After"]) > 0


def test_window_passing_lifts_the_block(app, client, make_client):
    app_client = make_client(grant_types=["client_credentials"])
    for _ in range(10):
        _token_attempt(client, app_client, "wrong")
    assert _token_attempt(client, app_client, app_client.secret).status_code == 429
    with app.app_context():
        db.session.execute(db.update(AuthFailure).values(at=AuthFailure.at - 601_000))
        db.session.commit()
    assert _token_attempt(client, app_client, app_client.secret).status_code == 200


def test_username_bar_blocks_a_distributed_guess_after_50_failures(app, client, make_user):
    user = make_user()
    with app.app_context():
        from oauth import throttle

        for i in range(50):
            throttle.record_failure(ip=f"10.1.{i}.1", username=user.username)
    resp = _login(client, user.username, PASSWORD, ip="10.2.0.1")
    assert resp.status_code == 429


def test_success_resets_the_username_count_not_the_ip_count(app, client, make_user):
    user = make_user()
    for _ in range(3):
        _login(client, user.username, "wrong-password", ip="10.3.0.1")
    assert _login(client, user.username, PASSWORD, ip="10.3.0.1").status_code == 303
    with app.app_context():
        keys = [row.key for row in db.session.scalars(db.select(AuthFailure))]
    assert keys.count("ip:10.3.0.1") == 3
    assert f"user:{user.username}" not in keys


def test_failures_for_unknown_usernames_count_the_same(app, client):
    for _ in range(10):
        _login(client, "nobody", "x", ip="10.4.0.1")
    assert _login(client, "nobody", "x", ip="10.4.0.1").status_code == 429


@pytest.mark.parametrize("trusted,expected_key", [(0, "ip:127.0.0.1"), (1, "ip:203.0.113.9")])
def test_x_forwarded_for_is_believed_only_from_trusted_proxies(app_config, trusted, expected_key, make_user):
    from app import create_app

    application = create_app({**app_config, "TRUSTED_PROXIES": trusted})
    web = application.test_client()
    page = web.get("/login")
    web.post("/login", headers={"X-Forwarded-For": "203.0.113.9"}, environ_base={"REMOTE_ADDR": "127.0.0.1"},
             data={"username": "ghost", "password": "x", "next": "/",
                   "csrf_token": csrf_from(page.get_data(as_text=True))})
    with application.app_context():
        keys = [row.key for row in db.session.scalars(db.select(AuthFailure))]
        db.session.remove()
        db.engine.dispose()
    assert expected_key in keys
