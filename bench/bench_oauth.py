"""Benchmarks of the hot paths (SPEC 7): token (authorization_code), token (refresh_token),
and the Bearer check (`GET /api/v4/users/me`), against a real gunicorn on loopback.

    .venv/bin/python bench/bench_oauth.py                      # SQLite in a temp dir
    DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1/bench .venv/bin/python bench/bench_oauth.py

Prints requests/s, p50 and p99 per operation. Bounded: N requests per operation, a fixed
number of client threads, loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live import start_server  # noqa: E402


def _prepare(database_url: str, n: int) -> dict:
    """Create a client, a user and n authorization codes directly through the services."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "bench")
    from flask_migrate import upgrade

    from app import create_app
    from extensions import db
    from oauth import services
    from oauth.models import AuthorizationRequest
    from utils import new_secret, now_ms

    app = create_app({"AUTHFLOW_BASE_URL": "http://bench"})
    with app.app_context():
        upgrade()
        for table in reversed(db.metadata.sorted_tables):
            db.session.execute(table.delete())
        db.session.commit()
        client, secret = services.create_client("bench", ["http://127.0.0.1:9/cb"])
        user = services.create_user("bench", "bench@example.org", "bench-password")
        codes = []
        for _ in range(n):
            pending = AuthorizationRequest(
                id=new_secret(32), client_pk=client.id, client=client, redirect_uri="http://127.0.0.1:9/cb",
                scope="profile api", state="s", expires_at=now_ms() + 3_600_000,
            )
            db.session.add(pending)
            db.session.flush()
            location = services.decide(pending, user, True, issuer="http://bench", code_ttl=3600)
            codes.append(location.split("code=")[1].split("&")[0])
        db.session.commit()
        return {"client_id": client.client_id, "secret": secret, "codes": codes}


def _measure(name: str, calls, threads: int) -> dict:
    latencies: list[float] = []
    errors = 0

    def run(call):
        start = time.perf_counter()
        resp = call()
        return time.perf_counter() - start, resp.status_code

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for latency, status in pool.map(run, calls):
            latencies.append(latency)
            errors += status != 200
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "operation": name,
        "requests": len(latencies),
        "errors": errors,
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=400, help="requests per operation")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="authflow-bench-"))
    database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{tmp}/bench.db"
    data = _prepare(database_url, args.n)
    server = start_server(database_url, log_dir=tmp, workers=args.workers)
    token_url = server.url + "/index.php/apps/oauth2/api/v1/token"
    auth = (data["client_id"], data["secret"])
    sessions = {}

    def session():
        import threading

        key = threading.get_ident()
        if key not in sessions:
            sessions[key] = requests.Session()
        return sessions[key]

    try:
        results = []
        issued: list[dict] = []

        def redeem(code):
            def call():
                resp = session().post(token_url, data={"grant_type": "authorization_code", "code": code}, auth=auth)
                if resp.status_code == 200:
                    issued.append(resp.json())
                return resp
            return call

        results.append(_measure("token authorization_code", [redeem(c) for c in data["codes"]], args.threads))

        def refresh(token):
            return lambda: session().post(token_url, data={"grant_type": "refresh_token",
                                                           "refresh_token": token["refresh_token"]}, auth=auth)

        results.append(_measure("token refresh_token", [refresh(t) for t in list(issued)], args.threads))
        access = issued[0]["access_token"] if issued else ""
        me_url = server.url + "/api/v4/users/me"
        bearer = [lambda: session().get(me_url, headers={"Authorization": f"Bearer {access}"})] * args.n
        results.append(_measure("bearer check users/me", bearer, args.threads))
    finally:
        server.stop()
    kind = "postgresql" if database_url.startswith("postgresql") else "sqlite"
    for row in results:
        row["database"] = kind
        print(json.dumps(row))


if __name__ == "__main__":
    main()
