"""SPEC 2.1/2.4, STYLE 5: codes, tokens and client secrets are stored only as hashes.

The test reads what the database really holds (every byte of the SQLite file and its WAL, or
every row of every table on PostgreSQL) and finds none of the raw values.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from sqlalchemy import text

from extensions import db
from tests.conftest import TOKEN_URL, basic


def _database_dump(app) -> str:
    with app.app_context():
        engine = db.engine
        if engine.dialect.name == "sqlite":
            path = Path(engine.url.database)
            files = [str(p) for p in (path, Path(str(path) + "-wal")) if p.exists()]
            # Read the bytes in another process: closing a descriptor of the database file in
            # this one would drop SQLite's POSIX locks on it (and break the other tests).
            return subprocess.run(["cat", *files], capture_output=True, check=True).stdout.decode("latin-1")
        parts = []
        with engine.connect() as conn:
            for table in db.metadata.sorted_tables:
                for row in conn.execute(text(f'SELECT * FROM "{table.name}"')):
                    parts.append(repr(tuple(row)))
        return "\n".join(parts)


def test_database_holds_no_raw_code_token_or_client_secret(app, client, make_client, make_user, make_pat, get_code):
    app_client = make_client()
    user = make_user()
    code, verifier = get_code(app_client, user)
    # A second code stays unredeemed, so it is in the database as a live row.
    pending_code, _ = get_code(app_client, user)
    tokens = client.post(TOKEN_URL, data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
                         headers=basic(app_client.client_id, app_client.secret)).get_json()
    refreshed = client.post(TOKEN_URL, data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                            headers=basic(app_client.client_id, app_client.secret)).get_json()
    pat = make_pat(user)
    dump = _database_dump(app)
    assert app_client.client_id in dump  # the dump really contains the data
    secrets = {
        "client secret": app_client.secret,
        "code": code,
        "unredeemed code": pending_code,
        "access token": tokens["access_token"],
        "refresh token": tokens["refresh_token"],
        "rotated access token": refreshed["access_token"],
        "rotated refresh token": refreshed["refresh_token"],
        "personal access token": pat,
        "password": "correct horse battery",
    }
    for name, value in secrets.items():
        assert value not in dump, f"raw {name} found in the database"
