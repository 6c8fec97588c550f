"""Browser login sessions: a signed cookie naming the user, bound to its password hash so a
password change or deactivation ends every session. Nothing of it lives in a process.
"""

from __future__ import annotations

from flask import request, session
from flask.sessions import SecureCookieSessionInterface

from extensions import db
from oauth.models import User
from utils import hash_secret


class AuthflowSessionInterface(SecureCookieSessionInterface):
    """The session cookie is Secure whenever the request came over https (SPEC 2.2)."""

    def get_cookie_secure(self, app) -> bool:
        return bool(app.config.get("SESSION_COOKIE_SECURE")) or request.is_secure


def _password_binding(user: User) -> str:
    return hash_secret("session:" + (user.password_hash or ""))[:24]


def log_in(user: User) -> None:
    session.clear()
    session["uid"] = user.id
    session["pw"] = _password_binding(user)


def log_out() -> None:
    session.clear()


def current_user() -> User | None:
    uid = session.get("uid")
    if not uid:
        return None
    user = db.session.get(User, uid)
    if user is None or not user.is_active or session.get("pw") != _password_binding(user):
        session.clear()
        return None
    return user
