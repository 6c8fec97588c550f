"""SPEC 4.5 and 8.12: jobs, their status moves, and the runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from admin_api import jobs_service
from admin_api.models import Job
from extensions import db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def admin(make_user, make_pat):
    return {"Authorization": f"Bearer {make_pat(make_user(admin=True))}"}


def _job(app, status="pending", job_type="oauth_cleanup") -> str:
    with app.app_context():
        job = jobs_service.create_job(job_type, {})
        job.status = status
        db.session.commit()
        return job.id


def _status(app, job_id) -> str:
    with app.app_context():
        return db.session.get(Job, job_id).status


def test_create_job_returns_201_and_lists_newest_first(client, admin):
    first = client.post("/api/v4/jobs", json={"type": "oauth_cleanup", "data": {"k": "v"}}, headers=admin)
    assert first.status_code == 201
    body = first.get_json()
    assert body["status"] == "pending" and body["data"] == {"k": "v"} and len(body["id"]) == 26
    second = client.post("/api/v4/jobs", json={"type": "oauth_cleanup"}, headers=admin).get_json()
    listed = client.get("/api/v4/jobs", headers=admin).get_json()
    assert [j["id"] for j in listed][:2] in ([second["id"], body["id"]], [body["id"], second["id"]])
    assert listed[0]["create_at"] >= listed[1]["create_at"]
    assert client.get(f"/api/v4/jobs/{body['id']}", headers=admin).get_json()["id"] == body["id"]


def test_create_job_of_unknown_type_is_400(client, admin):
    resp = client.post("/api/v4/jobs", json={"type": "mine_bitcoin"}, headers=admin)
    assert resp.status_code == 400 and resp.get_json()["id"] == "api.job.create.invalid_type"


@pytest.mark.parametrize("query", ["job_type=nope", "status=sleeping"])
def test_list_with_unknown_type_or_status_is_400(client, admin, query):
    assert client.get(f"/api/v4/jobs?{query}", headers=admin).status_code == 400


def test_list_filters_by_type_and_status(app, client, admin):
    done = _job(app, "success")
    pending = _job(app)
    ids = [j["id"] for j in client.get("/api/v4/jobs?status=success&job_type=oauth_cleanup", headers=admin).get_json()]
    assert ids == [done] and pending not in ids


@pytest.mark.parametrize("current,target,ok", [
    ("pending", "cancel_requested", True), ("pending", "canceled", True), ("in_progress", "cancel_requested", True),
    ("cancel_requested", "canceled", True), ("pending", "in_progress", False), ("success", "pending", False),
    ("in_progress", "canceled", False), ("canceled", "pending", False), ("error", "canceled", False),
])
def test_status_moves_without_force(app, client, admin, current, target, ok):
    job_id = _job(app, current)
    resp = client.patch(f"/api/v4/jobs/{job_id}/status", json={"status": target}, headers=admin)
    if ok:
        assert resp.status_code == 200 and resp.get_json() == {"status": "OK"}
        assert _status(app, job_id) == target
    else:
        assert resp.status_code == 400 and resp.get_json()["id"] == "api.job.status.invalid"
        assert _status(app, job_id) == current


@pytest.mark.parametrize("target,ok", [("pending", True), ("cancel_requested", True), ("canceled", True),
                                       ("success", False), ("in_progress", False)])
def test_forced_moves_only_to_pending_cancel_requested_canceled(app, client, admin, target, ok):
    job_id = _job(app, "error")
    resp = client.patch(f"/api/v4/jobs/{job_id}/status", json={"status": target, "force": True}, headers=admin)
    assert resp.status_code == (200 if ok else 400)


def test_unknown_job_is_404(client, admin):
    assert client.get("/api/v4/jobs/" + "x" * 26, headers=admin).status_code == 404
    resp = client.patch("/api/v4/jobs/" + "x" * 26 + "/status", json={"status": "canceled"}, headers=admin)
    assert resp.status_code == 404


def test_jobs_routes_need_permissions_before_the_body(client, make_user, make_pat):
    headers = {"Authorization": f"Bearer {make_pat(make_user())}"}
    assert client.get("/api/v4/jobs", headers=headers).status_code == 403
    assert client.post("/api/v4/jobs", data="{junk", content_type="application/json", headers=headers).status_code == 403
    assert client.patch("/api/v4/jobs/x/status", data="{junk", content_type="application/json",
                        headers=headers).status_code == 403


def test_runner_runs_a_job_to_success_with_progress(app):
    job_id = _job(app)
    with app.app_context():
        assert jobs_service.drain() == 1
        job = db.session.get(Job, job_id)
        assert job.status == "success" and job.progress == 100 and job.start_at > 0
        assert "tokens" in job.data


def test_runner_honours_cancel_requested_between_steps(app):
    steps = []

    @jobs_service.register("test_steps")
    def _steps(ctx):
        for i in range(1, 4):
            steps.append(i)
            if i == 1:
                db.session.execute(db.update(Job).where(Job.id == ctx.job_id).values(status="cancel_requested"))
                db.session.commit()
            ctx.progress(i * 30)

    try:
        job_id = _job(app, job_type="test_steps")
        with app.app_context():
            jobs_service.drain()
        assert steps == [1] and _status(app, job_id) == "canceled"
    finally:
        jobs_service.HANDLERS.pop("test_steps")


def test_failing_job_ends_in_error_not_a_crash(app):
    @jobs_service.register("test_fail")
    def _fail(ctx):
        raise RuntimeError("boom")

    try:
        job_id = _job(app, job_type="test_fail")
        with app.app_context():
            assert jobs_service.drain() == 1
        assert _status(app, job_id) == "error"
    finally:
        jobs_service.HANDLERS.pop("test_fail")


def test_periodic_jobs_are_scheduled_once_per_slot(app):
    with app.app_context():
        first = jobs_service.schedule_periodic(now=1_000_000_000)
        second = jobs_service.schedule_periodic(now=1_000_000_500)
        assert "oauth_cleanup" in first and "oauth_cleanup" not in second
        assert db.session.query(Job).filter(Job.type == "oauth_cleanup").count() == 1


def test_several_runner_processes_run_each_job_exactly_once(app, app_config, tmp_path):
    """Two real `flask jobs run --once` processes drain one queue: every job runs once."""
    ids = [_job(app) for _ in range(20)]
    env = {"DATABASE_URL": app_config["SQLALCHEMY_DATABASE_URI"], "SECRET_KEY": "x", "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-m", "flask", "--app", "app", "jobs", "run", "--once"], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    import json

    ran = sum(json.loads(out.strip().splitlines()[-1])["ran"] for out, _ in outputs)
    # 20 queued jobs plus the periodic ones the runners scheduled (one per slot, not one per runner).
    with app.app_context():
        total = db.session.query(Job).count()
        statuses = {j.id: j.status for j in db.session.scalars(db.select(Job))}
    assert ran == total
    assert all(statuses[i] == "success" for i in ids)


def test_remote_cluster_ping_job_runs_and_reports_counts(app, client, admin):
    created = client.post("/api/v4/jobs", json={"type": "remote_cluster_ping"}, headers=admin)
    assert created.status_code == 201
    with app.app_context():
        assert jobs_service.drain() >= 1
        job = db.session.get(Job, created.get_json()["id"])
        assert job.status == "success" and job.data == {"pinged": "0", "failed": "0"}
