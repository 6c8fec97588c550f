"""The job types we run (SPEC 4.5), registered with the runner."""

from __future__ import annotations

from admin_api.jobs_service import JobContext, register
from extensions import db


@register("oauth_cleanup", every_seconds=3600)
def oauth_cleanup(ctx: JobContext) -> dict:
    """Delete expired codes, authorization requests, tokens and old throttle records."""
    from oauth.services import cleanup_expired

    counts = cleanup_expired()
    ctx.progress(100)
    return counts


@register("remote_cluster_ping", every_seconds=60)
def remote_cluster_ping(ctx: JobContext) -> dict:
    """Ping every confirmed remote and record last_ping_at (SPEC 5 keep-alive)."""
    from admin_api.remote_cluster_services import ping_all_remotes

    results = ping_all_remotes()
    db.session.commit()
    ctx.progress(100)
    return {"pinged": sum(r.ok for r in results), "failed": sum(not r.ok for r in results)}
