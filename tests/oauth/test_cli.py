"""SPEC 2.1, 2.2, 2.8: the operator CLI (flask --app app ...)."""

from __future__ import annotations

import json

from extensions import db
from oauth.models import AuthorizationCode, Client, Token, User
from utils import hash_secret


def _run(app, *args):
    result = app.test_cli_runner().invoke(args=list(args))
    return result


def test_users_create_list_set_password_deactivate(app):
    out = _run(app, "users", "create", "--username", "Alice", "--email", "alice@example.org",
               "--password", "s3cret-pass", "--admin", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["username"] == "alice" and "system_admin" in data["roles"] and "password" not in out.output
    listed = json.loads(_run(app, "users", "list", "--json").output)
    assert [u["username"] for u in listed] == ["alice"]
    assert _run(app, "users", "set-password", "alice", "--password", "another-pass").exit_code == 0
    assert _run(app, "users", "deactivate", "alice").exit_code == 0
    with app.app_context():
        user = db.session.scalars(db.select(User)).one()
        assert user.delete_at > 0
        assert "another-pass" not in user.password_hash and user.password_hash.startswith("$argon2id$")


def test_users_create_rejects_duplicates_and_bad_usernames(app):
    assert _run(app, "users", "create", "--username", "bob", "--email", "b@example.org", "--password", "12345678").exit_code == 0
    dup = _run(app, "users", "create", "--username", "BOB", "--email", "c@example.org", "--password", "12345678")
    assert dup.exit_code == 1 and "already exists" in dup.output
    bad = _run(app, "users", "create", "--username", "b b", "--email", "d@example.org", "--password", "12345678")
    assert bad.exit_code == 1 and "username" in bad.output


def test_tokens_create_prints_once_and_stores_hash(app, make_user):
    make_user("carol")
    out = _run(app, "tokens", "create", "--username", "carol", "--json")
    data = json.loads(out.output)
    with app.app_context():
        from oauth.models import PersonalAccessToken

        row = db.session.get(PersonalAccessToken, data["id"])
        assert row.token_hash == hash_secret(data["token"])
    assert _run(app, "tokens", "revoke", data["id"]).exit_code == 0


def test_clients_create_list_rotate_delete(app):
    out = _run(app, "clients", "create", "--name", "Web", "--redirect-uri", "https://web.example.org/cb",
               "--redirect-uri", "https://web.example.org/cb2", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert len(data["client_id"]) == 26 and len(data["client_secret"]) == 64
    with app.app_context():
        row = db.session.scalars(db.select(Client)).one()
        assert row.client_secret_hash == hash_secret(data["client_secret"])
    listed = json.loads(_run(app, "clients", "list", "--json").output)
    assert listed[0]["client_id"] == data["client_id"] and "client_secret" not in listed[0]
    rotated = json.loads(_run(app, "clients", "rotate-secret", data["client_id"], "--json").output)
    assert rotated["client_secret"] != data["client_secret"]
    assert _run(app, "clients", "delete", data["client_id"]).exit_code == 0
    assert json.loads(_run(app, "clients", "list", "--json").output) == []


def test_clients_create_public_has_no_secret(app):
    data = json.loads(_run(app, "clients", "create", "--name", "SPA", "--redirect-uri", "http://localhost:3000/cb",
                           "--public", "--json").output)
    assert data["client_secret"] is None and data["confidential"] is False


def test_clients_create_enforces_redirect_uri_rules(app):
    for uri in ["http://app.example.org/cb", "https://app.example.org/cb#frag", "/relative", "ftp://x.example.org/"]:
        out = _run(app, "clients", "create", "--name", "X", "--redirect-uri", uri)
        assert out.exit_code == 1, uri
    too_many = ["--redirect-uri=https://a.example.org/" + str(i) for i in range(11)]
    assert _run(app, "clients", "create", "--name", "X", *too_many).exit_code == 1


def test_oauth_cleanup_deletes_expired_codes_requests_and_tokens(app, client, make_client, make_user, get_code):
    from tests.conftest import TOKEN_URL, basic

    app_client = make_client()
    user = make_user()
    code, verifier = get_code(app_client, user)
    client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                headers=basic(app_client.client_id, app_client.secret))
    get_code(app_client, user)  # a live code that must survive
    with app.app_context():
        db.session.execute(db.update(Token).values(access_expires_at=1, refresh_expires_at=1))
        first = db.session.scalars(db.select(AuthorizationCode).order_by(AuthorizationCode.create_at)).first()
        first.expires_at = 1
        db.session.commit()
    out = _run(app, "oauth", "cleanup", "--batch-size", "1")
    counts = json.loads(out.output)
    assert counts["tokens"] == 1 and counts["codes"] == 1
    with app.app_context():
        assert db.session.query(Token).count() == 0
        assert db.session.query(AuthorizationCode).count() == 1


def test_roles_prints_the_permission_table(app):
    out = _run(app, "roles", "--json")
    table = json.loads(out.output)
    assert "manage_secure_connections" in table["system_admin"]
    assert "manage_system" not in table["system_user"]
