"""A real gunicorn authflow on a loopback port, sharing the test database."""

from __future__ import annotations

import pytest

from tests.live import start_server


@pytest.fixture(scope="module")
def live_server(app, database_url, tmp_path_factory):
    server = start_server(database_url, log_dir=tmp_path_factory.mktemp("live"))
    yield server
    server.stop()
    log = server.log()
    assert "Traceback" not in log, log
