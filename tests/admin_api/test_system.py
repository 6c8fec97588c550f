"""SPEC 3.4, 4.6, 8.13: ping, logging and log download, limits, support packet."""

from __future__ import annotations

import io
import json
import re
import time
import zipfile

import pytest
import yaml

import logs
from tests.admin_api.helpers import stored_names

DRIVERS = ("local", "amazons3", "azureblob")
SECRETS = {
    "FileSettings": {"AmazonS3SecretAccessKey": "sekrit-s3-value", "AzureAccessKey": "sekrit-azure-value",
                     "PublicLinkSalt": "sekrit-salt-value"},
    "LdapSettings": {"BindPassword": "sekrit-ldap-value"},
}


# --- ping ----------------------------------------------------------------------------------

def test_ping_needs_no_token(client):
    resp = client.get("/api/v4/system/ping")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["status"] == "OK" and body["ActiveSearchBackend"] == "database"
    assert "database_status" not in body and "database_status" not in resp.headers


@pytest.mark.parametrize("driver", DRIVERS)
def test_ping_server_status_probes_db_and_each_file_store(client, set_config, file_settings, driver):
    fs = file_settings(driver)
    set_config({"FileSettings": fs})
    resp = client.get("/api/v4/system/ping?get_server_status=true")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["status"] == "OK"
    assert body["database_status"] == "OK" and body["filestore_status"] == "OK"
    assert resp.headers["database_status"] == "OK" and resp.headers["filestore_status"] == "OK"
    assert "root_status" not in body
    assert stored_names(fs) == []  # the probe cleaned up after itself


def test_root_status_only_for_manage_system(client, local_files, admin_headers, user_headers):
    admin = client.get("/api/v4/system/ping?get_server_status=true", headers=admin_headers).get_json()
    assert isinstance(admin["root_status"], bool)
    user = client.get("/api/v4/system/ping?get_server_status=true", headers=user_headers).get_json()
    assert "root_status" not in user


def test_unhealthy_file_store_is_500_unless_rest_semantics(client, set_config, file_settings):
    set_config({"FileSettings": file_settings("amazons3", AmazonS3Bucket="no-such-bucket")})
    resp = client.get("/api/v4/system/ping?get_server_status=true")
    assert resp.status_code == 500
    body = resp.get_json()
    assert body["status"] == "UNHEALTHY"
    assert body["database_status"] == "OK" and body["filestore_status"] == "UNHEALTHY"
    assert resp.headers["filestore_status"] == "UNHEALTHY"
    resp = client.get("/api/v4/system/ping?get_server_status=true&use_rest_semantics=true")
    assert resp.status_code == 200 and resp.get_json() == body


def test_unreachable_database_is_unhealthy(other_app):
    broken = other_app(SQLALCHEMY_DATABASE_URI="postgresql+psycopg://postgres@127.0.0.1:1/none",
                       SQLALCHEMY_ENGINE_OPTIONS={"connect_args": {"connect_timeout": 2}})
    resp = broken.test_client().get("/api/v4/system/ping?get_server_status=true")
    assert resp.status_code == 500
    body = resp.get_json()
    assert body["status"] == "UNHEALTHY" and body["database_status"] == "UNHEALTHY"
    assert broken.test_client().get("/api/v4/system/ping").status_code == 200  # no probe asked


def test_ping_bad_flag_is_400(client):
    resp = client.get("/api/v4/system/ping?get_server_status=maybe")
    assert resp.status_code == 400 and resp.get_json()["id"] == "api.context.invalid_url_param.app_error"


# --- logs ----------------------------------------------------------------------------------

def test_logs_download_is_404_when_file_logging_is_off(client, admin_headers):
    resp = client.get("/api/v4/logs/download", headers=admin_headers)
    assert resp.status_code == 404
    assert resp.get_json()["id"] == "api.system.logs.not_enabled.app_error"


def test_logs_download_needs_manage_system(client, user_headers):
    assert client.get("/api/v4/logs/download", headers=user_headers).status_code == 403


def test_file_log_is_json_lines_with_request_ids_and_no_secrets(app, client, admin_headers, set_config, file_logging):
    set_config(SECRETS)
    with app.app_context():
        logs.refresh_from_config(app, force=True)
    client.get("/api/v4/users/me?access_token=query-token-value", headers={**admin_headers, "X-Request-Id": "req-123"})
    import logging

    logging.getLogger("authflow").warning("backend said sekrit-s3-value was wrong")
    resp = client.get("/api/v4/logs/download", headers=admin_headers)
    assert resp.status_code == 200
    assert resp.mimetype == "text/plain"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="authflow.log"'
    text = resp.get_data(as_text=True)
    entries = [json.loads(line) for line in text.splitlines()]
    me = [e for e in entries if e.get("path") == "/api/v4/users/me"]
    assert me and me[0]["request_id"] == "req-123" and me[0]["status"] == 200 and me[0]["method"] == "GET"
    assert {"time", "level", "msg", "duration_ms", "user_id"} <= set(me[0])
    token = admin_headers["Authorization"].split()[1]
    for secret in [token, "query-token-value", *[v for s in SECRETS.values() for v in s.values()]]:
        assert secret not in text
    assert "backend said ******************************** was wrong" in text


def test_log_settings_reach_the_worker_within_5_seconds(app, client, admin_headers, tmp_path):
    folder = tmp_path / "later-logs"
    resp = client.patch("/api/v4/config/patch", headers=admin_headers,
                        json={"LogSettings": {"EnableFile": True, "FileLocation": str(folder)}})
    assert resp.status_code == 200
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (folder / "authflow.log").exists():
            client.get("/api/v4/system/ping")
            time.sleep(0.2)
        assert (folder / "authflow.log").exists()
    finally:
        logs.apply_settings(app, {"EnableFile": False})


def test_unreadable_log_file_is_500(app, client, admin_headers, set_config, tmp_path):
    folder = tmp_path / "odd"
    (folder / "authflow.log").mkdir(parents=True)  # a folder where the file should be
    set_config({"LogSettings": {"EnableFile": True, "FileLocation": str(folder)}})
    try:
        resp = client.get("/api/v4/logs/download", headers=admin_headers)
        assert resp.status_code == 500
        assert resp.get_json()["id"] == "api.system.logs.download.app_error"
    finally:
        logs.apply_settings(app, {"EnableFile": False})


def test_log_file_rotates(tmp_path):
    handler = logs.SharedRotatingFileHandler(str(tmp_path / "authflow.log"), max_bytes=200, backup_count=2)
    handler.setFormatter(logs.JsonFormatter())
    import logging

    logger = logging.getLogger("authflow.rotation-test")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for i in range(20):
            logger.warning("line %d", i)
    finally:
        logger.removeHandler(handler)
        handler.close()
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert names == ["authflow.log", "authflow.log.1", "authflow.log.2"]


# --- limits --------------------------------------------------------------------------------

def test_limits_for_admins_and_users(client, admin_headers, user_headers, make_user):
    make_user(password="", auth_service="ldap", is_bot=True)
    admin = client.get("/api/v4/limits/server", headers=admin_headers).get_json()
    assert admin == {"maxUsersLimit": 0, "maxUsersHardLimit": 0, "activeUserCount": 2,
                     "postHistoryLimit": 0, "lastAccessiblePostTime": 0}
    user = client.get("/api/v4/limits/server", headers=user_headers).get_json()
    assert user["maxUsersLimit"] == 0 and user["activeUserCount"] == 0


def test_limits_come_from_the_license(client, admin_headers, install_license):
    install_license(users=25)
    body = client.get("/api/v4/limits/server", headers=admin_headers).get_json()
    assert body["maxUsersLimit"] == 25 and body["activeUserCount"] == 1


# --- support packet ------------------------------------------------------------------------

def _packet(client, headers, query=""):
    resp = client.get("/api/v4/system/support_packet" + query, headers=headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp, zipfile.ZipFile(io.BytesIO(resp.data))


def test_support_packet_needs_manage_system(client, user_headers):
    resp = client.get("/api/v4/system/support_packet", headers=user_headers)
    assert resp.status_code == 403 and resp.get_json()["id"] == "api.context.permissions.app_error"


def test_support_packet_is_a_zip_of_the_named_files_without_secrets(client, admin_headers, set_config, local_files,
                                                                     file_logging, install_license):
    set_config(SECRETS)
    install_license(users=10)
    client.get("/api/v4/users/me", headers=admin_headers)  # something in the log
    resp, archive = _packet(client, admin_headers)
    assert resp.mimetype == "application/zip"
    assert re.fullmatch(r'attachment; filename="authflow_support_packet_\d{4}-\d\d-\d\dT\d\d-\d\d\.zip"',
                        resp.headers["Content-Disposition"])
    assert sorted(archive.namelist()) == sorted(["metadata.yaml", "stats.yaml", "jobs.yaml", "diagnostics.yaml",
                                                 "sanitized_config.json", "authflow.log"])
    metadata = yaml.safe_load(archive.read("metadata.yaml"))
    assert metadata["licensed"] is True and metadata["server_version"]
    stats = yaml.safe_load(archive.read("stats.yaml"))
    assert stats["users"] == 1 and stats["active_users"] == 1
    assert stats["personal_access_tokens"] == 1 and stats["oauth_clients"] == 0 and stats["oauth_tokens"] == 0
    assert isinstance(yaml.safe_load(archive.read("jobs.yaml"))["jobs"], list)
    diagnostics = yaml.safe_load(archive.read("diagnostics.yaml"))
    assert diagnostics["database"]["kind"] in ("sqlite", "postgresql")
    assert diagnostics["database"]["schema_revision"] and diagnostics["database"]["status"] == "OK"
    assert diagnostics["file_store"] == {"driver": "local", "status": "OK", "error_id": ""}
    assert diagnostics["python_version"] and diagnostics["os"]
    config = json.loads(archive.read("sanitized_config.json"))
    for section, values in SECRETS.items():
        for name in values:
            assert config[section][name] == "*" * 32
    assert any(json.loads(line).get("path") == "/api/v4/users/me"
               for line in archive.read("authflow.log").decode().splitlines())
    everything = b"".join(archive.read(n) for n in archive.namelist())
    token = admin_headers["Authorization"].split()[1].encode()
    for secret in [token, *[v.encode() for s in SECRETS.values() for v in s.values()]]:
        assert secret not in everything


def test_support_packet_without_logs(client, admin_headers, local_files, file_logging):
    _, archive = _packet(client, admin_headers, "?basic_server_logs=false")
    assert "authflow.log" not in archive.namelist()


def test_support_packet_has_no_log_when_file_logging_is_off(client, admin_headers, local_files):
    _, archive = _packet(client, admin_headers)
    assert "authflow.log" not in archive.namelist()
    assert "sanitized_config.json" in archive.namelist()
