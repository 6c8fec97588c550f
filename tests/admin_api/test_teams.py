"""SPEC 4.3: the minimal teams other operations point at (admin_headers/user_headers: conftest)."""

from __future__ import annotations

import pytest

from utils import is_id


def test_create_team_returns_201_with_the_team_shape(client, admin_headers):
    resp = client.post("/api/v4/teams", json={"name": "core-team", "display_name": "Core"}, headers=admin_headers)
    assert resp.status_code == 201
    body = resp.get_json()
    assert set(body) == {"id", "name", "display_name", "type", "create_at", "update_at", "delete_at"}
    assert is_id(body["id"]) and body["name"] == "core-team" and body["type"] == "O"
    assert body["create_at"] > 10**12 and body["delete_at"] == 0


@pytest.mark.parametrize("name", ["a", "-lead", "trail-", "Upper", "has space", "x" * 65, "api", "under_score"])
def test_invalid_team_name_is_400(client, admin_headers, name):
    resp = client.post("/api/v4/teams", json={"name": name, "display_name": "X"}, headers=admin_headers)
    assert resp.status_code == 400
    assert resp.get_json()["id"] == "api.context.invalid_body_param.app_error"


def test_team_name_is_unique_409(client, admin_headers):
    first = client.post("/api/v4/teams", json={"name": "dup", "display_name": "A"}, headers=admin_headers)
    assert first.status_code == 201
    resp = client.post("/api/v4/teams", json={"name": "dup", "display_name": "B"}, headers=admin_headers)
    assert resp.status_code == 409
    assert resp.get_json()["id"] == "app.team.save.existing.app_error"


@pytest.mark.parametrize("body", [{"name": "ok"}, {"name": 5, "display_name": "x"}, {"name": "ok", "display_name": "x", "type": "Z"},
                                  {"name": "ok", "display_name": "x", "extra": 1}])
def test_team_body_rules_are_400(client, admin_headers, body):
    resp = client.post("/api/v4/teams", json=body, headers=admin_headers)
    assert resp.status_code == 400
    assert resp.get_json()["id"] == "api.context.invalid_body_param.app_error"


def test_list_teams_shows_invite_only_teams_to_admins_only(client, admin_headers, user_headers):
    client.post("/api/v4/teams", json={"name": "open", "display_name": "Open"}, headers=admin_headers)
    client.post("/api/v4/teams", json={"name": "closed", "display_name": "Closed", "type": "I"}, headers=admin_headers)
    admin_view = client.get("/api/v4/teams", headers=admin_headers).get_json()
    user_view = client.get("/api/v4/teams", headers=user_headers).get_json()
    assert [t["name"] for t in admin_view] == ["closed", "open"]
    assert [t["name"] for t in user_view] == ["open"]


def test_teams_need_a_token(client):
    assert client.get("/api/v4/teams").status_code == 401
    assert client.post("/api/v4/teams", json={}).status_code == 401
