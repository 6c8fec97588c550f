"""Brute-force throttling shared through the database (SPEC 2.7, 8.1, 8.21).

One per-IP counter for failed logins and failed client authentications (more than
`THROTTLE_MAX_IP_FAILURES` in the window → 429 for everything from that IP), and a
per-username counter for logins with a higher bar. A successful login resets the username's
count, not the IP's.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select

from errors import TooManyRequests
from extensions import db
from oauth.models import AuthFailure
from utils import now_ms

# Failures older than this are never counted again (longer than any sane window).
THROTTLE_RETENTION_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class Limits:
    window_seconds: int
    max_ip_failures: int
    max_user_failures: int


def ip_key(ip: str | None) -> str:
    return "ip:" + (ip or "unknown")


def user_key(username: str) -> str:
    return "user:" + (username or "").strip().lower()[:254]


def _retry_after(key: str, limit: int, window_ms: int, now: int) -> int | None:
    """Seconds until `key` is below `limit` again, or None when it is below now."""
    since = now - window_ms
    count, oldest = db.session.execute(
        select(func.count(AuthFailure.id), func.min(AuthFailure.at)).where(
            AuthFailure.key == key, AuthFailure.at > since
        )
    ).one()
    if count < limit:
        return None
    # The window passes when the newest failures inside it age out; waiting for the oldest
    # to leave is the simple, conservative answer.
    return max(1, (oldest + window_ms - now + 999) // 1000)


def check(limits: Limits, *, ip: str | None, username: str | None = None, message: str | None = None) -> None:
    """Raise TooManyRequests when the IP (or the username) is past its bar."""
    now = now_ms()
    window_ms = limits.window_seconds * 1000
    wait = _retry_after(ip_key(ip), limits.max_ip_failures, window_ms, now)
    if wait is None and username:
        wait = _retry_after(user_key(username), limits.max_user_failures, window_ms, now)
    if wait is not None:
        raise TooManyRequests(wait, message)


def record_failure(*, ip: str | None, username: str | None = None) -> None:
    """Count a failure; committed at once, since the request itself will be rolled back."""
    now = now_ms()
    db.session.add(AuthFailure(key=ip_key(ip), at=now))
    if username:
        db.session.add(AuthFailure(key=user_key(username), at=now))
    db.session.commit()


def reset_user(username: str) -> None:
    db.session.execute(delete(AuthFailure).where(AuthFailure.key == user_key(username)))
