#!/usr/bin/env bash
# Serve authflow on http://127.0.0.1:8000 with SQLite: installs, migrates, creates the first
# admin (its password is printed once), then runs gunicorn.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export FLASK_APP=app
export AUTHFLOW_BASE_URL=${AUTHFLOW_BASE_URL:-http://127.0.0.1:8000}
.venv/bin/flask db upgrade
.venv/bin/flask users bootstrap-admin
exec .venv/bin/gunicorn -c gunicorn.conf.py wsgi:app
