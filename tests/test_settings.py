"""SPEC 7: settings from the environment; production refuses to start half-configured."""

from __future__ import annotations

import pytest

import settings


def _validated(**overrides) -> dict:
    config = {**settings.DEFAULTS, **overrides}
    settings.validate(config)
    return config


def test_production_requires_secret_key(tmp_path):
    with pytest.raises(settings.SettingsError, match="SECRET_KEY"):
        settings.ensure_secret_key({"AUTHFLOW_ENV": "production"}, str(tmp_path))


def test_development_makes_one_secret_key_and_keeps_it(tmp_path):
    first, second = {}, {}
    settings.ensure_secret_key(first, str(tmp_path))
    settings.ensure_secret_key(second, str(tmp_path))
    assert first["SECRET_KEY"] == second["SECRET_KEY"] and len(first["SECRET_KEY"]) >= 40
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_production_requires_base_url():
    with pytest.raises(settings.SettingsError, match="AUTHFLOW_BASE_URL"):
        _validated(AUTHFLOW_ENV="production", AUTHFLOW_BASE_URL="")
    assert _validated(AUTHFLOW_ENV="production", AUTHFLOW_BASE_URL="https://auth.example.org/")[
        "AUTHFLOW_BASE_URL"] == "https://auth.example.org"


@pytest.mark.parametrize("raw,expected", [
    ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
    ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
    ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
])
def test_database_url_uses_psycopg3(raw, expected):
    assert settings.database_uri(raw, "/x") == expected


def test_bad_integer_setting_names_the_variable(tmp_path):
    with pytest.raises(settings.SettingsError, match="AUTHFLOW_ACCESS_TOKEN_TTL"):
        settings.from_environment({"AUTHFLOW_ACCESS_TOKEN_TTL": "soon"}, str(tmp_path))
