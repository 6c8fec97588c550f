"""/api/v4/users: who am I, and the minimal user administration the other operations need."""

from __future__ import annotations

from flask import jsonify

from admin_api.auth import any_scope, current_caller, requires
from admin_api.blueprint import bp
from admin_api.http import load_body, paging
from admin_api.openapi import PAGING, documented
from extensions import db
from oauth import services
from oauth.models import User
from schemas.user import UserCreateSchema, UserSchema

_user = UserSchema()
_users = UserSchema(many=True)


@bp.get("/users/me")
@documented(response=UserSchema)
@any_scope
def get_me():
    """The user the Bearer token acts for (no secrets)."""
    return jsonify(_user.dump(current_caller().user))


@bp.get("/users/<user_id>")
@documented(response=UserSchema)
@requires("list_users")
def get_user(user_id: str):
    """One user by id."""
    return jsonify(_user.dump(services.get_user(user_id)))


@bp.get("/users")
@documented(response=UserSchema, many=True, params=PAGING)
@requires("list_users")
def list_users():
    """Users ordered by username, paged."""
    page, per_page = paging()
    rows = db.session.scalars(
        db.select(User).order_by(User.username).offset(page * per_page).limit(per_page)
    )
    return jsonify(_users.dump(rows))


@bp.post("/users")
@documented(body=UserCreateSchema, response=UserSchema, status=201)
@requires("edit_other_users", "sysconsole_write_user_management_users")
def create_user():
    """Create a user (admin)."""
    data = load_body(UserCreateSchema())
    user = services.create_user(**data)
    db.session.commit()
    return jsonify(_user.dump(user)), 201
