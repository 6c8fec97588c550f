"""SPEC 5 end to end: two authflow processes (gunicorn) on two loopback ports with two
databases. A invites, B accepts, the invite dies after one use, pings are recorded on both
sides, and once A deletes the remote, B's calls to A are refused with 401.

On PostgreSQL (DATABASE_URL set to one) the test creates two throwaway databases on the
same server and drops them afterwards; otherwise it uses two SQLite files.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
import requests

from admin_api import invites
from tests.live import ROOT, LiveServer, free_port, start_server

pytestmark = pytest.mark.e2e

ADMIN_PASSWORD = "federation admin pw"


@dataclass
class Node:
    name: str
    database_url: str
    port: int
    env: dict
    server: LiveServer | None = None
    token: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def flask(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "flask", "--app", "app", *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=60,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"flask {' '.join(args)} failed on {self.name}:\n{result.stdout}\n{result.stderr}")
        return result

    def api(self, method: str, path: str, **kw) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kw.pop("headers", {})}
        return requests.request(method, self.url + "/api/v4" + path, headers=headers, timeout=20, **kw)


def _node(name: str, database_url: str) -> Node:
    port = free_port()
    env = dict(os.environ)
    # The same settings tests.live.start_server gives the server, so the CLI reads and
    # writes what the server does (SECRET_KEY decides the key of the sealed tokens).
    env.update({
        "DATABASE_URL": database_url,
        "SECRET_KEY": f"live-secret-{port}",
        "AUTHFLOW_BASE_URL": f"http://127.0.0.1:{port}",
        "AUTHFLOW_ALLOW_PRIVATE_REMOTES": "true",
        "PYTHONPATH": str(ROOT),
    })
    return Node(name, database_url, port, env)


# The operator's commands (`flask --app app db upgrade`, `users create --admin`, `tokens create
# --json`), run through Flask's CLI runner in one process per server: three separate
# `flask` processes cost seconds each on a small machine.
_SETUP = """
import sys
from app import create_app

runner = create_app().test_cli_runner()


def run(*args):
    result = runner.invoke(args=list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


run("db", "upgrade")
run("users", "create", "--username", "admin", "--email", sys.argv[1], "--password", sys.argv[2], "--admin")
print(run("tokens", "create", "--username", "admin", "--json").strip().splitlines()[-1])
"""


def _prepare(node: Node, log_dir) -> Node:
    result = subprocess.run(
        [sys.executable, "-c", _SETUP, f"admin@{node.name}.test", ADMIN_PASSWORD],
        cwd=ROOT, env=node.env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    node.token = json.loads(result.stdout.strip().splitlines()[-1])["token"]
    node.server = start_server(node.database_url, log_dir=log_dir, port=node.port)
    return node


@pytest.fixture
def database_urls():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        yield None
        return
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(url)
    admin_dsn = base.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    names = [f"authflow_fed_{side}_{secrets.token_hex(4)}" for side in ("a", "b")]
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield [base.set(database=name).render_as_string(hide_password=False) for name in names]
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            for name in names:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def nodes(database_urls, tmp_path):
    urls = database_urls or [f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"]
    a, b = _node("a", urls[0]), _node("b", urls[1])
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda n: _prepare(n, tmp_path), (a, b)))
        yield a, b
    finally:
        for node in (a, b):
            if node.server:
                node.server.stop()


def _team(node: Node) -> str:
    resp = node.api("POST", "/teams", json={"name": f"team-{node.name}", "display_name": node.name.upper()})
    assert resp.status_code == 201, resp.text
    return resp.json()["id"]


def _ping(node: Node) -> tuple[int, list[dict]]:
    result = node.flask("remotecluster", "ping", "--json", check=False)
    return result.returncode, json.loads(result.stdout)


def test_two_servers_invite_accept_ping_delete(nodes):
    a, b = nodes
    team_a, team_b = _team(a), _team(b)

    # A creates the remote and its invite.
    created = a.api("POST", "/remotecluster", json={"name": "beta", "default_team_id": team_a})
    assert created.status_code == 201, created.text
    remote_id = created.json()["remote_cluster"]["remote_id"]
    code, password = created.json()["invite"], created.json()["password"]

    # B accepts it; A confirms during the call.
    accept = {"name": "alpha", "default_team_id": team_b, "invite": code, "password": password}
    accepted = b.api("POST", "/remotecluster/accept_invite", json=accept)
    assert accepted.status_code == 201, accepted.text + a.server.log() + b.server.log()
    on_b = accepted.json()
    assert on_b["remote_id"] == remote_id and on_b["site_url"] == a.url
    assert on_b["token"] == "" and on_b["remote_token"] == ""

    on_a = a.api("GET", f"/remotecluster/{remote_id}").json()
    assert on_a["site_url"] == b.url and on_a["token"] == "" and on_a["remote_token"] == ""
    confirmed = a.api("GET", "/remotecluster?only_confirmed=true").json()
    assert [r["remote_id"] for r in confirmed] == [remote_id]

    # The invite works once: B already has the remote (409), and A no longer takes its token.
    again = b.api("POST", "/remotecluster/accept_invite", json=accept)
    assert again.status_code == 409 and again.json()["id"] == "api.remote_cluster.already_exists.app_error"
    invite_token = invites.decrypt_invite(code, password)["token"]
    replay = requests.post(
        a.url + "/api/v4/remotecluster/confirm_invite",
        json={"remote_id": remote_id, "msg": {"topic": "invitation", "payload": {
            "remote_id": remote_id, "site_url": "http://127.0.0.1:1", "token": "t" * 32,
            "refreshed_token": "r" * 32, "version": 3}}},
        headers={"X-RemoteCluster-Id": remote_id, "X-RemoteCluster-Token": invite_token},
        timeout=10,
    )
    assert replay.status_code == 401 and replay.json()["id"] == "api.context.invalid_token.error"
    assert a.api("GET", f"/remotecluster/{remote_id}").json()["site_url"] == b.url

    # Keep-alive both ways records last_ping_at on both sides.
    assert a.api("GET", f"/remotecluster/{remote_id}").json()["last_ping_at"] == 0
    with ThreadPoolExecutor(2) as pool:
        (code_a, results_a), (code_b, results_b) = pool.map(_ping, (a, b))
    assert code_a == 0 and [(r["remote_id"], r["ok"]) for r in results_a] == [(remote_id, True)]
    assert code_b == 0 and [(r["remote_id"], r["ok"]) for r in results_b] == [(remote_id, True)]
    for node in (a, b):
        record = node.api("GET", f"/remotecluster/{remote_id}").json()
        assert record["last_ping_at"] > 0 and record["online"] is True

    # A deletes the remote: B's calls to A now fail with 401.
    deleted = a.api("DELETE", f"/remotecluster/{remote_id}")
    assert deleted.status_code == 200 and deleted.json() == {"status": "OK"}
    code_b, results_b = _ping(b)
    assert code_b == 1
    [failed] = results_b
    assert failed["ok"] is False and failed["status"] == 401
    assert failed["error_id"] == "api.context.invalid_token.error"

    # No secret reached either server's log.
    for node in (a, b):
        log = node.server.log()
        assert invite_token not in log and node.token not in log and password not in log
