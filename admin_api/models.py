"""Tables of the admin API. Each feature keeps its classes in one block."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from utils import new_id, now_ms

# --- configuration, license and files (SPEC 3.2, 3.3, 4.10) ---------------------------------------------


class ConfigRecord(db.Model):
    """One saved configuration. The current one has active=True; history rows have NULL,
    so the unique constraint allows exactly one current row (Mattermost's Configurations).
    Secret fields inside `value` are encrypted (admin_api.config_store).
    """

    __tablename__ = "config"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    value: Mapped[str] = mapped_column(Text)
    active: Mapped[bool | None] = mapped_column(Boolean, unique=True, nullable=True)
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    created_by: Mapped[str] = mapped_column(String(64), default="")


class LicenseRecord(db.Model):
    """An installed license file; the current one has active=True (same scheme as config)."""

    __tablename__ = "licenses"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    license_id: Mapped[str] = mapped_column(String(64))
    document: Mapped[str] = mapped_column(Text)
    active: Mapped[bool | None] = mapped_column(Boolean, unique=True, nullable=True)
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class FileInfo(db.Model):
    """An uploaded file; its bytes live in the file store at `path` (SPEC 4.10)."""

    __tablename__ = "files"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    creator_id: Mapped[str] = mapped_column(String(26), index=True)
    channel_id: Mapped[str] = mapped_column(String(26), default="")
    name: Mapped[str] = mapped_column(String(256))
    extension: Mapped[str] = mapped_column(String(64), default="")
    size: Mapped[int] = mapped_column(BigInteger)
    mime_type: Mapped[str] = mapped_column(String(128))
    path: Mapped[str] = mapped_column(String(512))
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    update_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    delete_at: Mapped[int] = mapped_column(BigInteger, default=0)


# --- end configuration, license and files --------------------------------------------------


# --- teams and remote clusters (SPEC 4.3, 5) ------------------------------------------------

PENDING_SITE_URL_PREFIX = "pending_"
ONLINE_WINDOW_MS = 5 * 60 * 1000


class Team(db.Model):
    __tablename__ = "teams"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(1), default="O")
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    update_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    delete_at: Mapped[int] = mapped_column(BigInteger, default=0)


class RemoteCluster(db.Model):
    """A secure connection to another server. `remote_id` is the same on both sides.

    `token_hash` is the SHA-256 of the token the remote must present to us (we only verify
    it); `remote_token_sealed` is the token we present to the remote, encrypted with a key
    derived from SECRET_KEY (admin_api.secret_box) because we must send it in clear.
    """

    __tablename__ = "remote_clusters"

    remote_id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(64))
    display_name: Mapped[str] = mapped_column(String(64))
    site_url: Mapped[str] = mapped_column(String(512))
    default_team_id: Mapped[str] = mapped_column(String(26), ForeignKey("teams.id"))
    create_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    delete_at: Mapped[int] = mapped_column(BigInteger, default=0, index=True)
    last_ping_at: Mapped[int] = mapped_column(BigInteger, default=0)
    # Space-separated, with a leading and trailing space so " topic " matches a whole word.
    topics: Mapped[str] = mapped_column(String(512), default="")
    creator_id: Mapped[str] = mapped_column(String(26), default="")
    plugin_id: Mapped[str] = mapped_column(String(190), default="")
    options: Mapped[int] = mapped_column(Integer, default=0)
    token_hash: Mapped[str] = mapped_column(String(64), default="")
    remote_token_sealed: Mapped[str] = mapped_column(Text, default="")

    @property
    def is_confirmed(self) -> bool:
        return not self.site_url.startswith(PENDING_SITE_URL_PREFIX)

    def is_online(self, now: int) -> bool:
        return self.last_ping_at > now - ONLINE_WINDOW_MS


# --- end teams and remote clusters -----------------------------------------------------------

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
