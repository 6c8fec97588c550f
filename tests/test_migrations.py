"""STYLE 7: the migrations describe exactly the models (one head, nothing left to generate)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from extensions import db


def test_migrations_have_one_head_and_match_the_models(app):
    with app.app_context():
        config = app.extensions["migrate"].migrate.get_config()
        assert len(ScriptDirectory.from_config(config).get_heads()) == 1
        with db.engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={"render_as_batch": True}), db.metadata)
        assert diff == []

