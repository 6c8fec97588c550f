"""/api/v4/jobs (SPEC 4.5)."""

from __future__ import annotations

from flask import jsonify, request

from admin_api import jobs_service
from admin_api.auth import current_caller, require_any, requires
from admin_api.blueprint import bp
from admin_api.http import load_body, paging
from admin_api.openapi import PAGING, Param, documented
from extensions import db
from schemas.common import StatusOKSchema
from schemas.job import JobCreateSchema, JobSchema, JobStatusSchema

_job = JobSchema()


@bp.get("/jobs")
@documented(response=JobSchema, many=True, params=[*PAGING, Param("job_type", {"type": "string"}, "Only jobs of this type."),
                                                   Param("status", {"type": "string"}, "Only jobs in this status.")])
def list_jobs():
    """Jobs, newest first, filtered by job_type and status, paged."""
    require_any("read_jobs", "manage_system")
    page, per_page = paging()
    jobs = jobs_service.list_jobs(
        job_type=request.args.get("job_type"), status=request.args.get("status"),
        offset=page * per_page, limit=per_page,
    )
    return jsonify(JobSchema(many=True).dump(jobs))


@bp.get("/jobs/<job_id>")
@documented(response=JobSchema)
def get_job(job_id: str):
    """One job."""
    require_any("read_jobs", "manage_system")
    return jsonify(_job.dump(jobs_service.get_job(job_id)))


@bp.post("/jobs")
@documented(body=JobCreateSchema, response=JobSchema, status=201)
@requires("manage_jobs")
def create_job():
    """Queue a job of a known type."""
    data = load_body(JobCreateSchema())
    job = jobs_service.create_job(data["type"], data["data"], creator_id=current_caller().user.id)
    db.session.commit()
    return jsonify(_job.dump(job)), 201


@bp.patch("/jobs/<job_id>/status")
@documented(body=JobStatusSchema, response=StatusOKSchema)
@requires("manage_jobs")
def set_job_status(job_id: str):
    """Move a job to another status (cancel, or force back to pending)."""
    data = load_body(JobStatusSchema())
    jobs_service.set_status(job_id, data["status"], force=data["force"])
    db.session.commit()
    return jsonify({"status": "OK"})
