#!/usr/bin/env bash
# Run the whole test suite (SQLite by default; PostgreSQL when DATABASE_URL is set).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh --test
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
