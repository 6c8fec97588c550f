"""SPEC 6 item 4 and 8.18: which FileSettings are usable, and how they configure a driver.

No server is needed here: building a driver makes no network call.
"""

from __future__ import annotations

import pytest

import storage_probe
from storage_probe import (
    DRIVERS,
    AzureBlobDriver,
    LocalDriver,
    S3Driver,
    StorageConfigError,
    StorageError,
    UnsupportedDriverError,
    make_driver,
    validate_file_settings,
)

PLACEHOLDER = "*" * 32
# Explicit keys: with empty ones boto3 would ask the instance metadata service for some.
KEYS = {"AmazonS3AccessKeyId": "AKIAEXAMPLE", "AmazonS3SecretAccessKey": "secret"}


def test_registry_names_the_three_spec_drivers() -> None:
    assert DRIVERS == {"local": LocalDriver, "amazons3": S3Driver, "azureblob": AzureBlobDriver}


@pytest.mark.parametrize("driver", ["", "   ", "ftp", "Local", None])
def test_empty_or_unknown_driver_is_unsupported(file_settings, driver: object) -> None:
    fs = file_settings(DriverName=driver)
    with pytest.raises(UnsupportedDriverError) as validated:
        validate_file_settings(fs)
    with pytest.raises(StorageError) as made:
        make_driver(fs)
    for exc in (validated.value, made.value):
        assert exc.error_id == "api.file.test_connection_unsupported_driver.app_error"
        assert exc.status_code == 400


def test_local_driver_needs_nothing_more(file_settings) -> None:
    validate_file_settings(file_settings(DriverName="local", Directory=""))


def test_s3_without_bucket_is_missing_s3_bucket(file_settings) -> None:
    fs = file_settings(DriverName="amazons3", AmazonS3Bucket="", AmazonS3Region="eu-west-1")
    with pytest.raises(StorageConfigError) as exc:
        validate_file_settings(fs)
    assert exc.value.error_id == "api.admin.test_s3.missing_s3_bucket"
    assert exc.value.missing_fields == ("AmazonS3Bucket",)


def test_s3_with_bucket_but_no_region_or_endpoint_is_valid(file_settings) -> None:
    # SPEC 8.18: a missing Region means us-east-1, so only the bucket is required.
    validate_file_settings(
        file_settings(
            **KEYS,
            DriverName="amazons3",
            AmazonS3Bucket="b",
            AmazonS3Region="",
            AmazonS3Endpoint="",
        )
    )


@pytest.mark.parametrize(
    "blank",
    [
        ("AzureStorageAccount",),
        ("AzureContainer",),
        ("AzureAccessKey",),
        ("AzureStorageAccount", "AzureContainer", "AzureAccessKey"),
    ],
)
def test_azure_without_account_container_or_key_is_missing_azure_field(
    file_settings, blank: tuple[str, ...]
) -> None:
    fs = file_settings(
        DriverName="azureblob", AzureStorageAccount="acct", AzureContainer="c", AzureAccessKey="k"
    )
    fs.update(dict.fromkeys(blank, ""))
    with pytest.raises(StorageConfigError) as exc:
        validate_file_settings(fs)
    assert exc.value.error_id == "api.admin.test_azure.missing_azure_field"
    assert exc.value.missing_fields == blank


def test_placeholder_key_passes_validation_and_reaches_the_backend(file_settings) -> None:
    # SPEC 6 item 5 / 8.18: the placeholder is a value; the backend refuses it later.
    validate_file_settings(
        file_settings(
            DriverName="azureblob",
            AzureStorageAccount="acct",
            AzureContainer="c",
            AzureAccessKey=PLACEHOLDER,
        )
    )


def test_s3_endpoint_is_host_port_and_ssl_picks_the_scheme(file_settings) -> None:
    plain = make_driver(
        file_settings(
            **KEYS, DriverName="amazons3", AmazonS3Bucket="b", AmazonS3Endpoint="127.0.0.1:9000",
            AmazonS3SSL=False,
        )
    )
    tls = make_driver(
        file_settings(
            **KEYS, DriverName="amazons3", AmazonS3Bucket="b", AmazonS3Endpoint="127.0.0.1:9000",
            AmazonS3SSL=True,
        )
    )
    assert plain.client.meta.endpoint_url == "http://127.0.0.1:9000"
    assert tls.client.meta.endpoint_url == "https://127.0.0.1:9000"


def test_s3_missing_region_means_us_east_1(file_settings) -> None:
    driver = make_driver(
        file_settings(**KEYS, DriverName="amazons3", AmazonS3Bucket="b", AmazonS3Region="")
    )
    assert driver.client.meta.region_name == "us-east-1"


@pytest.mark.parametrize(("sign_v2", "expected"), [(True, "s3"), (False, "s3v4")])
def test_s3_sign_v2_picks_the_signature_version(
    file_settings, sign_v2: bool, expected: str
) -> None:
    driver = make_driver(
        file_settings(**KEYS, DriverName="amazons3", AmazonS3Bucket="b", AmazonS3SignV2=sign_v2)
    )
    assert driver.client.meta.config.signature_version == expected


@pytest.mark.parametrize(("value", "seconds"), [(1500, 1.5), (0, 30.0), (None, 30.0), ("", 30.0)])
def test_s3_timeouts_come_from_request_timeout_ms_default_30s(
    file_settings, value: object, seconds: float
) -> None:
    driver = make_driver(
        file_settings(
            **KEYS,
            DriverName="amazons3",
            AmazonS3Bucket="b",
            AmazonS3RequestTimeoutMilliseconds=value,
        )
    )
    config = driver.client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (seconds, seconds)
    assert config.retries["total_max_attempts"] == 1


def test_azure_account_url_from_endpoint_else_the_public_cloud(file_settings) -> None:
    common = dict(
        DriverName="azureblob", AzureStorageAccount="acct", AzureContainer="c", AzureAccessKey="k"
    )
    public = make_driver(file_settings(**common, AzureEndpoint=""))
    emulator = make_driver(
        file_settings(**common, AzureEndpoint="http://127.0.0.1:10000/acct/")
    )
    assert public.account_url == "https://acct.blob.core.windows.net"
    assert emulator.account_url == "http://127.0.0.1:10000/acct"


@pytest.mark.parametrize(("value", "seconds"), [(2500, 2.5), (-1, 30.0)])
def test_azure_timeout_comes_from_request_timeout_ms(
    file_settings, value: object, seconds: float
) -> None:
    driver = make_driver(
        file_settings(
            DriverName="azureblob", AzureStorageAccount="a", AzureContainer="c",
            AzureAccessKey="k", AzureRequestTimeoutMilliseconds=value,
        )
    )
    assert driver.timeout == seconds


def test_package_imports_no_flask_and_nothing_of_the_project() -> None:
    import ast
    from pathlib import Path

    stdlib = {"__future__", "abc", "base64", "binascii", "collections", "dataclasses",
              "logging", "os", "secrets", "tempfile", "threading", "typing"}
    allowed_roots = stdlib | {"boto3", "botocore", "azure"}
    for source in Path(storage_probe.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= allowed_roots, f"{source.name} imports {roots - allowed_roots}"
