"""Teams (SPEC 4.3): the minimal model other operations (remote clusters) point at."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from admin_api.models import Team
from errors import Conflict, InvalidInput, NotFound
from extensions import db

# Mattermost's team name rule: 2-64 of a-z, 0-9 and '-', starting and ending alphanumeric.
TEAM_NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,62})[a-z0-9]$")
RESERVED_TEAM_NAMES = frozenset(
    {"admin", "api", "channel", "claim", "error", "files", "help", "landing", "login", "mfa",
     "oauth", "plug", "plugins", "post", "signup", "boards", "playbooks"}
)


def create_team(name: str, display_name: str, type: str = "O") -> Team:
    """Create a team. Raises InvalidInput (bad name) or Conflict (name taken)."""
    if not TEAM_NAME_RE.match(name or "") or name in RESERVED_TEAM_NAMES:
        raise InvalidInput(
            "name must be 2-64 characters of a-z, 0-9 and '-', start and end with a letter "
            "or digit, and not be a reserved word.",
        )
    if not display_name.strip():
        raise InvalidInput("display_name must not be blank.")
    team = Team(name=name, display_name=display_name.strip(), type=type)
    db.session.add(team)
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError as exc:
        # The unique key decides, not a pre-check: two concurrent creates cannot both win.
        raise Conflict(f"A team named {name!r} already exists.", error_id="app.team.save.existing.app_error") from exc
    return team


def get_team(team_id: str) -> Team:
    """A team that is not deleted. Raises NotFound."""
    team = db.session.get(Team, team_id) if isinstance(team_id, str) else None
    if team is None or team.delete_at:
        raise NotFound("Team not found.", error_id="app.team.get.find.app_error")
    return team


def team_exists(team_id: str) -> bool:
    try:
        get_team(team_id)
    except NotFound:
        return False
    return True


def list_teams(*, include_private: bool, offset: int, limit: int) -> list[Team]:
    """Teams that are not deleted, by name; invite-only ones only when `include_private`."""
    query = select(Team).where(Team.delete_at == 0)
    if not include_private:
        query = query.where(Team.type == "O")
    return list(db.session.scalars(query.order_by(Team.name).offset(offset).limit(limit)))
