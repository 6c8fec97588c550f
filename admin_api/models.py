"""Tables of the admin API."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from utils import new_id, now_ms


class Job(db.Model):
    """A unit of background work (SPEC 4.5), claimed by exactly one runner."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_priority", "status", "priority", "create_at"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    type: Mapped[str] = mapped_column(String(64), index=True)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    start_at: Mapped[int] = mapped_column(BigInteger, default=0)
    last_activity_at: Mapped[int] = mapped_column(BigInteger, default=0)
    status: Mapped[str] = mapped_column(String(32), default="pending")
    progress: Mapped[int] = mapped_column(Integer, default=0)
    data: Mapped[dict] = mapped_column(JSON, default=dict)
    creator_id: Mapped[str] = mapped_column(String(26), default="")
    # Set on jobs the runners schedule themselves ("<type>:<time slot>"); the unique key makes
    # sure that several runners on several hosts schedule each slot once.
    schedule_key: Mapped[str | None] = mapped_column(String(128), unique=True, nullable=True)
