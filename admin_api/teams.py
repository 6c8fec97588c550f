"""/api/v4/teams: just enough teams for the operations that name one (SPEC 4.3)."""

from __future__ import annotations

from flask import jsonify

from admin_api import team_services
from admin_api.auth import current_caller, requires
from admin_api.blueprint import bp
from admin_api.http import load_body, paging
from admin_api.openapi import PAGING, documented
from extensions import db
from schemas.team import TeamCreateSchema, TeamSchema

_team = TeamSchema()
_teams = TeamSchema(many=True)


@bp.post("/teams")
@documented(body=TeamCreateSchema, response=TeamSchema, status=201)
@requires("create_team")
def create_team():
    """Create a team."""
    data = load_body(TeamCreateSchema())
    team = team_services.create_team(**data)
    db.session.commit()
    return jsonify(_team.dump(team)), 201


@bp.get("/teams")
@documented(response=TeamSchema, many=True, params=PAGING)
def list_teams():
    """Teams by name, paged; invite-only teams only for system managers."""
    page, per_page = paging()
    rows = team_services.list_teams(
        include_private=current_caller().can("manage_system"), offset=page * per_page, limit=per_page
    )
    return jsonify(_teams.dump(rows))
