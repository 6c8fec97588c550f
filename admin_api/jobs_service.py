"""Jobs (SPEC 4.5): creation, listing, status moves, and the runner that claims and runs
them. Every claim and every status move is a conditional UPDATE, so no job runs twice even
with several runners on several hosts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from admin_api.models import Job
from errors import InvalidInput, InvalidParam, NotFound
from extensions import db
from utils import now_ms

log = logging.getLogger("authflow")

STATUSES = ("pending", "in_progress", "success", "error", "cancel_requested", "canceled", "warning")
# Legal moves without `force` (SPEC 4.5).
MOVES = {
    "pending": {"cancel_requested", "canceled"},
    "in_progress": {"cancel_requested"},
    "cancel_requested": {"canceled"},
}
FORCE_TARGETS = {"pending", "cancel_requested", "canceled"}


class JobCanceled(Exception):
    """Raised inside a handler when its job was asked to stop."""


@dataclass
class JobContext:
    """What a handler gets: its job's data, and a way to report progress (and learn of a
    cancel request) between steps.
    """

    job_id: str
    data: dict

    def progress(self, percent: int) -> None:
        """Record progress; raises JobCanceled when a cancel was requested."""
        result = db.session.execute(
            update(Job)
            .where(Job.id == self.job_id, Job.status == "in_progress")
            .values(progress=max(0, min(100, int(percent))), last_activity_at=now_ms())
        )
        db.session.commit()
        if result.rowcount == 0:
            raise JobCanceled()


Handler = Callable[[JobContext], dict | None]
HANDLERS: dict[str, Handler] = {}
# Jobs the runners schedule on their own: type → period in seconds.
PERIODIC: dict[str, int] = {}


def register(job_type: str, *, every_seconds: int | None = None):
    """Register a handler for a job type (optionally scheduled every N seconds)."""

    def decorator(fn: Handler) -> Handler:
        HANDLERS[job_type] = fn
        if every_seconds:
            PERIODIC[job_type] = every_seconds
        return fn

    return decorator


def create_job(job_type: str, data: dict | None = None, *, creator_id: str = "") -> Job:
    """Queue a job. Raises InvalidInput for an unknown type or non-object data."""
    if job_type not in HANDLERS:
        raise InvalidInput(f"Unknown job type {job_type!r}.", error_id="api.job.create.invalid_type")
    if data is not None and not isinstance(data, dict):
        raise InvalidInput("data must be a JSON object.")
    job = Job(type=job_type, data={str(k): str(v) for k, v in (data or {}).items()}, creator_id=creator_id)
    db.session.add(job)
    db.session.flush()
    return job


def get_job(job_id: str) -> Job:
    job = db.session.get(Job, job_id)
    if job is None:
        raise NotFound("No such job.", error_id="app.job.get.app_error")
    return job


def list_jobs(*, job_type: str | None, status: str | None, offset: int, limit: int) -> list[Job]:
    """Newest first. Raises InvalidParam for an unknown type or status."""
    query = select(Job)
    if job_type:
        if job_type not in HANDLERS:
            raise InvalidParam(f"Unknown job type {job_type!r}.")
        query = query.where(Job.type == job_type)
    if status:
        if status not in STATUSES:
            raise InvalidParam(f"Unknown job status {status!r}.")
        query = query.where(Job.status == status)
    query = query.order_by(Job.create_at.desc(), Job.id.desc()).offset(offset).limit(limit)
    return list(db.session.scalars(query))


def set_status(job_id: str, target: str, *, force: bool = False) -> None:
    """Move a job to `target` under SPEC 4.5's rules. Raises NotFound or InvalidInput."""
    job = get_job(job_id)
    current = job.status
    allowed = target in FORCE_TARGETS if force else target in MOVES.get(current, set())
    if target not in STATUSES or not allowed:
        raise InvalidInput(
            f"A job cannot move from {current} to {target}{' even with force' if force else ''}.",
            error_id="api.job.status.invalid",
        )
    result = db.session.execute(
        update(Job).where(Job.id == job_id, Job.status == current).values(status=target, last_activity_at=now_ms())
    )
    if result.rowcount != 1:
        raise InvalidInput("The job changed state meanwhile; try again.", error_id="api.job.status.invalid")


# --- the runner ---------------------------------------------------------------------------


def claim_next() -> Job | None:
    """Claim the oldest pending job for this runner (exactly one runner wins it)."""
    query = select(Job.id).where(Job.status == "pending").order_by(Job.priority.desc(), Job.create_at).limit(10)
    if db.engine.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    for job_id in list(db.session.scalars(query)):
        now = now_ms()
        result = db.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "pending")
            .values(status="in_progress", start_at=now, last_activity_at=now, progress=0)
        )
        if result.rowcount == 1:
            db.session.commit()
            return db.session.get(Job, job_id)
    db.session.commit()
    return None


def run_job(job: Job) -> str:
    """Run a claimed job to its end state; returns that state."""
    ctx = JobContext(job.id, dict(job.data or {}))
    handler = HANDLERS[job.type]
    final, extra = "success", None
    try:
        extra = handler(ctx)
    except JobCanceled:
        final = "canceled"
    except Exception as exc:  # a job's failure is recorded on the job, not raised
        db.session.rollback()
        log.error("job failed", exc_info=exc)
        final, extra = "error", {"error": exc.__class__.__name__}
    values = {"status": final, "last_activity_at": now_ms()}
    if final == "success":
        values["progress"] = 100
    if extra:
        values["data"] = {**ctx.data, **{k: str(v) for k, v in extra.items()}}
    # Only from in_progress or cancel_requested: a forced move meanwhile wins.
    db.session.execute(
        update(Job).where(Job.id == job.id, Job.status.in_(["in_progress", "cancel_requested"])).values(**values)
    )
    db.session.commit()
    return final


def schedule_periodic(now: int | None = None) -> list[str]:
    """Queue each periodic job type once per period, across all runners (unique key)."""
    now = now or now_ms()
    made = []
    for job_type, seconds in PERIODIC.items():
        key = f"{job_type}:{now // (seconds * 1000)}"
        try:
            with db.session.begin_nested():
                db.session.add(Job(type=job_type, data={}, schedule_key=key))
                db.session.flush()
            made.append(job_type)
        except IntegrityError:
            pass  # another runner scheduled this slot
    db.session.commit()
    return made


def drain() -> int:
    """Run pending jobs until none is left; returns how many ran."""
    count = 0
    while (job := claim_next()) is not None:
        run_job(job)
        count += 1
    return count


def run_forever(interval: float = 5.0, stop: Callable[[], bool] = lambda: False) -> None:
    while not stop():
        schedule_periodic()
        if drain() == 0:
            time.sleep(interval)


# The built-in handlers register themselves on import.
from admin_api import job_handlers  # noqa: E402,F401
