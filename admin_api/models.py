"""Tables of the admin API. Each feature keeps its classes in one block."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, String, Text
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
