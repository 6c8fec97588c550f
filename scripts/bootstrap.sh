#!/usr/bin/env bash
# Installs what authflow needs into .venv (and, with --test, what its tests need:
# the test extras, Azurite and openid-client from npm, Debian's chromium). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ "${1:-}" = "--test" ]; then
  .venv/bin/python -m pip install -q -e '.[test]'
  if [ -f package.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      echo "chromium is missing: install Debian's chromium package (sudo apt-get install chromium)" >&2
      exit 1
    fi
  fi
else
  .venv/bin/python -m pip install -q -e .
fi
