"""Tables of the admin API. Each feature keeps its classes in one block."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from utils import new_id, now_ms

# --- configuration and license (SPEC 3.2, 3.3) ---------------------------------------------


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


# --- end configuration and license ---------------------------------------------------------
