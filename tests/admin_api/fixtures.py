"""Fixtures shared by the configuration, license, file and system tests.

Imported by name in each test module (a shared conftest would collide with other branches).
"""

from __future__ import annotations

import pytest

from admin_api import config_store
from extensions import db


# No password: these callers use tokens, and skipping Argon2 keeps each test fast.
_NO_PASSWORD = {"password": "", "auth_service": "ldap"}


@pytest.fixture
def admin_headers(make_user, make_pat) -> dict:
    return {"Authorization": "Bearer " + make_pat(make_user(admin=True, **_NO_PASSWORD))}


@pytest.fixture
def user_headers(make_user, make_pat) -> dict:
    return {"Authorization": "Bearer " + make_pat(make_user(**_NO_PASSWORD))}


@pytest.fixture
def set_config(app):
    """set_config({"FileSettings": {...}}): patch the stored configuration and commit."""

    def run(partial: dict) -> dict:
        with app.app_context():
            saved = config_store.patch_config(partial, actor="test")
            db.session.commit()
            return saved

    return run


def stored_rows(app) -> list[tuple[str, str, bool | None]]:
    from admin_api.models import ConfigRecord

    with app.app_context():
        rows = db.session.execute(db.select(ConfigRecord.id, ConfigRecord.value, ConfigRecord.active)).all()
        return sorted((r.id, r.value, r.active) for r in rows)


@pytest.fixture
def other_app(app_config):
    """other_app(**overrides): a second app on the same database, like another worker.

    Its engine is disposed afterwards so no pooled connection outlives the test.
    """
    from app import create_app

    made = []

    def make(**overrides):
        application = create_app({**app_config, **overrides})
        made.append(application)
        return application

    yield make
    for application in made:
        with application.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def license_key(app, tmp_path, monkeypatch):
    """A trusted Ed25519 key: returns the PEM file path; the app trusts its public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from admin_api.license_services import public_key_text

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "license-key.pem"
    path.write_bytes(pem)
    monkeypatch.setitem(app.config, "LICENSE_PUBLIC_KEYS", public_key_text(pem))
    return path


@pytest.fixture
def install_license(app, license_key):
    """install_license(features=[...], users=N): sign with the trusted key and install."""
    from admin_api import license_services

    def run(**kw) -> dict:
        with app.app_context():
            signed = license_services.issue_license(license_key.read_bytes(), **kw)
            import json

            doc = license_services.install_license(json.dumps(signed).encode())
            db.session.commit()
            return doc

    return run
