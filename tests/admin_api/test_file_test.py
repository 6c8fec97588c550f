"""SPEC 6 and 8.18: POST /api/v4/file/test (and /file/s3_test), rule by rule, on all three
drivers against real backends (a folder, moto's S3 server, Azurite)."""

from __future__ import annotations

import json
import socket
import time

import pytest

from admin_api.config_store import PLACEHOLDER
from tests.admin_api.helpers import stored_names, stored_rows

PATHS = ("/api/v4/file/test", "/api/v4/file/s3_test")
DRIVERS = ("local", "amazons3", "azureblob")
NIL = "api.file.test_connection_settings_nil.app_error"
BAD_BODY = "api.context.invalid_body_param.app_error"
UNSUPPORTED = "api.file.test_connection_unsupported_driver.app_error"
GENERIC = "api.file.test_connection.app_error"
BUCKET = "api.file.test_connection_bucket_does_not_exist.app_error"
AUTH = "api.file.test_connection_auth.app_error"
UNREACHABLE = "api.file.test_connection_unreachable.app_error"


@pytest.fixture(params=PATHS, ids=["test", "s3_test"])
def path(request):
    return request.param


@pytest.fixture
def full_config(client, admin_headers):
    """full_config(fs): the running configuration object with FileSettings replaced."""
    running = client.get("/api/v4/config", headers=admin_headers).get_json()

    def make(fs: dict) -> dict:
        return {**running, "FileSettings": fs}

    return make


def _post(client, path, headers, body=None, raw: str | None = None):
    if raw is not None:
        return client.post(path, headers=headers, data=raw, content_type="application/json")
    if body is None:
        return client.post(path, headers=headers)
    return client.post(path, headers=headers, json=body)


def _error(resp, status: int, error_id: str) -> dict:
    body = resp.get_json()
    assert resp.status_code == status, body
    assert body["id"] == error_id, body
    assert body["status_code"] == status
    return body


# Rule 1 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", ["", "{junk", '{"FileSettings":{}}', "[1,2]", "null"])
def test_1_permission_is_checked_before_the_body(client, user_headers, path, raw):
    resp = client.post(path, headers=user_headers, data=raw, content_type="application/json")
    _error(resp, 403, "api.context.permissions.app_error")


@pytest.mark.parametrize("driver", DRIVERS)
def test_1_permission_first_even_with_a_valid_body(client, user_headers, full_config, file_settings, path, driver):
    _error(_post(client, path, user_headers, full_config(file_settings(driver))), 403, "api.context.permissions.app_error")


def test_1_no_token_is_401(client, path):
    _error(client.post(path, data="{junk"), 401, "api.context.session_expired.app_error")


# Rule 2 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("raw", [None, "null"], ids=["no-body", "null"])
def test_2_no_body_tests_the_running_configuration(client, admin_headers, set_config, file_settings, path, driver, raw):
    set_config({"FileSettings": file_settings(driver)})
    resp = _post(client, path, admin_headers, raw=raw)
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {"status": "OK"}


@pytest.mark.parametrize("driver, broken, error_id", [
    ("local", {}, GENERIC),
    ("amazons3", {"AmazonS3Bucket": "no-such-bucket"}, BUCKET),
    ("azureblob", {"AzureContainer": "no-such-container"}, BUCKET),
])
def test_2_no_body_uses_the_running_configuration_also_when_it_fails(
        client, admin_headers, set_config, file_settings, tmp_path, driver, broken, error_id):
    fs = file_settings(driver, **broken)
    if driver == "local":
        (tmp_path / "a-file").write_text("x")
        fs["Directory"] = str(tmp_path / "a-file" / "below")
    set_config({"FileSettings": fs})
    _error(_post(client, "/api/v4/file/test", admin_headers), 500, error_id)


# Rule 3 -----------------------------------------------------------------------------------

def test_3_empty_object_is_settings_nil(client, admin_headers, path):
    _error(_post(client, path, admin_headers, {}), 400, NIL)


@pytest.mark.parametrize("raw", ["[1]", '"FileSettings"', "3", "{junk"])
def test_3_a_body_that_is_not_an_object_is_400(client, admin_headers, path, raw):
    _error(_post(client, path, admin_headers, raw=raw), 400, BAD_BODY)


@pytest.mark.parametrize("driver, missing", [
    ("local", ["Directory"]),
    ("amazons3", ["AmazonS3Region", "AmazonS3RequestTimeoutMilliseconds"]),
    ("azureblob", ["AzureEndpoint"]),
])
def test_3_file_settings_must_carry_every_field(client, admin_headers, full_config, file_settings, path, driver, missing):
    fs = file_settings(driver)
    for name in missing:
        del fs[name]
    body = _error(_post(client, path, admin_headers, full_config(fs)), 400, NIL)
    for name in missing:
        assert f"FileSettings.{name}" in body["message"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_3_wrongly_typed_fields_are_400(client, admin_headers, full_config, file_settings, path, driver):
    fs = file_settings(driver, AmazonS3SSL="no", AzureRequestTimeoutMilliseconds="soon")
    body = _error(_post(client, path, admin_headers, full_config(fs)), 400, BAD_BODY)
    assert "FileSettings.AmazonS3SSL" in body["message"]


# Rule 4 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("driver_name", ["", "ftp", "LOCAL", 7, None])
def test_4_empty_or_unknown_driver_is_unsupported(client, admin_headers, full_config, file_settings, path, driver_name):
    _error(_post(client, path, admin_headers, full_config(file_settings("local", DriverName=driver_name))), 400, UNSUPPORTED)


def test_4_local_needs_nothing_more(client, admin_headers, full_config, file_settings, path):
    fs = file_settings("local", AmazonS3Bucket="", AzureStorageAccount="", AzureContainer="", AzureAccessKey="")
    assert _post(client, path, admin_headers, full_config(fs)).status_code == 200


def test_4_amazons3_needs_a_bucket(client, admin_headers, full_config, file_settings, path):
    _error(_post(client, path, admin_headers, full_config(file_settings("amazons3", AmazonS3Bucket=""))),
           400, "api.admin.test_s3.missing_s3_bucket")


def test_4_amazons3_without_region_means_us_east_1(client, admin_headers, full_config, file_settings, path):
    resp = _post(client, path, admin_headers, full_config(file_settings("amazons3", AmazonS3Region="")))
    assert resp.status_code == 200, resp.get_json()


@pytest.mark.parametrize("field", ["AzureStorageAccount", "AzureContainer", "AzureAccessKey"])
def test_4_azureblob_needs_account_container_and_key(client, admin_headers, full_config, file_settings, path, field):
    body = _error(_post(client, path, admin_headers, full_config(file_settings("azureblob", **{field: ""}))),
                  400, "api.admin.test_azure.missing_azure_field")
    assert field in body["message"]


# Rule 5 -----------------------------------------------------------------------------------

SECRET_FILE_FIELDS = ("AmazonS3SecretAccessKey", "AzureAccessKey", "PublicLinkSalt")


@pytest.mark.parametrize("driver", DRIVERS)
def test_5_placeholders_take_the_running_secrets(client, admin_headers, set_config, full_config, file_settings, path, driver):
    fs = file_settings(driver, PublicLinkSalt="a-running-salt-value")
    set_config({"FileSettings": fs})
    sent = dict(fs, **{name: PLACEHOLDER for name in SECRET_FILE_FIELDS})
    resp = _post(client, path, admin_headers, full_config(sent))
    assert resp.status_code == 200, resp.get_json()


@pytest.mark.parametrize("driver", ["amazons3", "azureblob"])
def test_5_placeholder_without_a_running_secret_fails_as_auth(client, admin_headers, full_config, file_settings, path, driver):
    sent = file_settings(driver, **{name: PLACEHOLDER for name in SECRET_FILE_FIELDS})
    _error(_post(client, path, admin_headers, full_config(sent)), 500, AUTH)


def test_5_placeholder_is_harmless_for_local(client, admin_headers, full_config, file_settings, path):
    sent = file_settings("local", **{name: PLACEHOLDER for name in SECRET_FILE_FIELDS})
    assert _post(client, path, admin_headers, full_config(sent)).status_code == 200


# Rule 6 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("driver", DRIVERS)
def test_6_probe_writes_reads_deletes_and_nothing_is_persisted(app, client, admin_headers, set_config, full_config,
                                                              file_settings, path, driver):
    set_config({"TeamSettings": {"EnableOpenServer": True}})
    rows_before = stored_rows(app)
    running_before = client.get("/api/v4/config", headers=admin_headers).get_json()
    fs = file_settings(driver)
    resp = _post(client, path, admin_headers, full_config(fs))
    assert resp.status_code == 200
    assert stored_names(fs) == []  # the probe object is gone again
    assert stored_rows(app) == rows_before
    assert client.get("/api/v4/config", headers=admin_headers).get_json() == running_before


@pytest.mark.parametrize("driver", DRIVERS)
def test_6_probe_object_name_and_cleanup_keep_other_objects(client, admin_headers, full_config, file_settings, path, driver):
    from admin_api.file_store import driver_for

    fs = file_settings(driver)
    driver_for(fs).write("keep-me", b"x")
    assert _post(client, path, admin_headers, full_config(fs)).status_code == 200
    assert stored_names(fs) == ["keep-me"]


def test_6_local_probe_file_is_in_the_directory(client, admin_headers, full_config, file_settings, monkeypatch):
    import storage_probe.local as local

    written = []
    real_write = local.LocalDriver.write
    monkeypatch.setattr(local.LocalDriver, "write", lambda self, p, d: written.append(p) or real_write(self, p, d))
    fs = file_settings("local")
    assert _post(client, "/api/v4/file/test", admin_headers, full_config(fs)).status_code == 200
    assert len(written) == 1 and written[0].startswith("authflow-probe-") and "/" not in written[0]


# Rule 7 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("driver", DRIVERS)
def test_7_good_configuration_is_200_ok(client, admin_headers, full_config, file_settings, path, driver):
    resp = _post(client, path, admin_headers, full_config(file_settings(driver)))
    assert resp.status_code == 200
    assert resp.get_json() == {"status": "OK"}


def test_7_local_directory_not_writable(client, admin_headers, full_config, file_settings, tmp_path, path):
    (tmp_path / "plain-file").write_text("not a directory")
    fs = file_settings("local", Directory=str(tmp_path / "plain-file" / "files"))
    body = _error(_post(client, path, admin_headers, full_config(fs)), 500, GENERIC)
    assert "plain-file" in body["message"]


@pytest.mark.parametrize("driver, broken", [
    ("amazons3", {"AmazonS3Bucket": "no-such-bucket"}),
    ("azureblob", {"AzureContainer": "no-such-container"}),
])
def test_7_wrong_bucket_or_container(client, admin_headers, full_config, file_settings, path, driver, broken):
    body = _error(_post(client, path, admin_headers, full_config(file_settings(driver, **broken))), 500, BUCKET)
    assert "no-such-" in body["message"]


@pytest.mark.parametrize("driver, broken", [
    ("amazons3", {"AmazonS3SecretAccessKey": "wrong-secret"}),
    ("amazons3", {"AmazonS3AccessKeyId": "AKIAUNKNOWN000000000"}),
    ("azureblob", {"AzureAccessKey": "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk="}),
    ("azureblob", {"AzureAccessKey": "not base64 at all!"}),
])
def test_7_bad_credentials(client, admin_headers, full_config, file_settings, path, driver, broken):
    _error(_post(client, path, admin_headers, full_config(file_settings(driver, **broken))), 500, AUTH)


def _endpoint(driver: str, port: int) -> dict:
    if driver == "amazons3":
        return {"AmazonS3Endpoint": f"127.0.0.1:{port}", "AmazonS3RequestTimeoutMilliseconds": 1000}
    return {"AzureEndpoint": f"http://127.0.0.1:{port}/devstoreaccount1", "AzureRequestTimeoutMilliseconds": 1000}


@pytest.mark.parametrize("driver", ["amazons3", "azureblob"])
def test_7_unreachable_endpoint_fails_quickly(client, admin_headers, full_config, file_settings, path, driver):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        fs = file_settings(driver, **_endpoint(driver, closed.getsockname()[1]))
        started = time.monotonic()
        _error(_post(client, path, admin_headers, full_config(fs)), 500, UNREACHABLE)
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("driver", ["amazons3", "azureblob"])
def test_7_silent_endpoint_fails_within_the_request_timeout(client, admin_headers, full_config, file_settings, driver):
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes handshakes; nobody ever answers
        fs = file_settings(driver, **_endpoint(driver, silent.getsockname()[1]))
        started = time.monotonic()
        _error(_post(client, "/api/v4/file/test", admin_headers, full_config(fs)), 500, UNREACHABLE)
    assert time.monotonic() - started < 3.5  # timeout 1 s; one attempt, no retries


def test_7_error_bodies_never_echo_secrets(client, admin_headers, full_config, file_settings, path):
    fs = file_settings("amazons3", AmazonS3SecretAccessKey="wrong-secret-do-not-echo")
    resp = _post(client, path, admin_headers, full_config(fs))
    assert resp.status_code == 500
    assert "wrong-secret-do-not-echo" not in json.dumps(resp.get_json())
