"""SPEC 6 item 7 and 8.18, azureblob driver against Azurite."""

from __future__ import annotations

import base64
import time

import pytest

from storage_probe import make_driver

PLACEHOLDER = "*" * 32


def test_azure_missing_container_is_bucket_does_not_exist(azure_settings) -> None:
    azure_settings["AzureContainer"] = "no-such-container"
    result = make_driver(azure_settings).probe()
    assert result.error_id == "api.file.test_connection_bucket_does_not_exist.app_error"
    assert "no-such-container" in (result.message or "")


def test_azure_wrong_key_is_auth_error(azure_settings) -> None:
    azure_settings["AzureAccessKey"] = base64.b64encode(b"not the account key" * 3).decode()
    result = make_driver(azure_settings).probe()
    assert result.error_id == "api.file.test_connection_auth.app_error"


@pytest.mark.parametrize("key", [PLACEHOLDER, "not base64!", "abc"])
def test_azure_undecodable_key_is_auth_error_not_a_crash(azure_settings, key: str) -> None:
    # SPEC 8.18: the placeholder reaches the backend and fails as auth, even undecodable.
    azure_settings["AzureAccessKey"] = key
    result = make_driver(azure_settings).probe()
    assert result.error_id == "api.file.test_connection_auth.app_error"


def test_azure_closed_port_is_unreachable_fast(azure_settings, closed_port) -> None:
    azure_settings["AzureEndpoint"] = f"http://127.0.0.1:{closed_port}/devstoreaccount1"
    azure_settings["AzureRequestTimeoutMilliseconds"] = 1000
    started = time.monotonic()
    result = make_driver(azure_settings).probe()
    assert result.error_id == "api.file.test_connection_unreachable.app_error"
    assert time.monotonic() - started < 3


@pytest.mark.timeout(20)
def test_azure_silent_server_is_unreachable_within_the_request_timeout(
    azure_settings, silent_port
) -> None:
    azure_settings["AzureEndpoint"] = f"http://127.0.0.1:{silent_port}/devstoreaccount1"
    azure_settings["AzureRequestTimeoutMilliseconds"] = 1000
    started = time.monotonic()
    result = make_driver(azure_settings).probe()
    elapsed = time.monotonic() - started
    assert result.error_id == "api.file.test_connection_unreachable.app_error"
    # One attempt of 1 s; a retry, or botocore's extra second waiting for "100 Continue",
    # would take 2 s or more.
    assert 0.9 < elapsed < 1.9


def test_azure_path_prefix_with_slashes_joins_names_once(azure_settings, azure_account) -> None:
    prefix = azure_settings["AzurePathPrefix"]
    azure_settings["AzurePathPrefix"] = f"/{prefix}/"
    make_driver(azure_settings).write("x/y", b"1")
    names = [b.name for b in azure_account.container_client().list_blobs(name_starts_with=prefix)]
    assert names == [f"{prefix}/x/y"]
