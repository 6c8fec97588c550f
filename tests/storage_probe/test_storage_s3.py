"""SPEC 6 item 7, amazons3 driver against moto's S3 server (IAM authentication enforced)."""

from __future__ import annotations

import time

import pytest

from storage_probe import make_driver

PLACEHOLDER = "*" * 32


def test_s3_missing_bucket_is_bucket_does_not_exist(s3_settings) -> None:
    s3_settings["AmazonS3Bucket"] = "no-such-bucket"
    result = make_driver(s3_settings).probe()
    assert result.error_id == "api.file.test_connection_bucket_does_not_exist.app_error"
    assert "no-such-bucket" in (result.message or "")


@pytest.mark.parametrize(
    ("key_id", "secret"),
    [
        (None, "wrong-secret"),  # a real key id with the wrong secret
        ("AKIAIOSFODNN7EXAMPLE", None),  # a key id moto's IAM never issued
        (None, PLACEHOLDER),  # the placeholder with no running value (SPEC 8.18)
    ],
    ids=["wrong-secret", "unknown-key-id", "placeholder-secret"],
)
def test_s3_bad_credentials_are_auth_error(s3_settings, key_id, secret) -> None:
    if key_id is not None:
        s3_settings["AmazonS3AccessKeyId"] = key_id
    if secret is not None:
        s3_settings["AmazonS3SecretAccessKey"] = secret
    result = make_driver(s3_settings).probe()
    assert result.error_id == "api.file.test_connection_auth.app_error"


def test_s3_closed_port_is_unreachable_fast(s3_settings, closed_port) -> None:
    s3_settings["AmazonS3Endpoint"] = f"127.0.0.1:{closed_port}"
    s3_settings["AmazonS3RequestTimeoutMilliseconds"] = 1000
    started = time.monotonic()
    result = make_driver(s3_settings).probe()
    assert result.error_id == "api.file.test_connection_unreachable.app_error"
    assert time.monotonic() - started < 3


@pytest.mark.timeout(20)
def test_s3_silent_server_is_unreachable_within_the_request_timeout(
    s3_settings, silent_port
) -> None:
    s3_settings["AmazonS3Endpoint"] = f"127.0.0.1:{silent_port}"
    s3_settings["AmazonS3RequestTimeoutMilliseconds"] = 1000
    started = time.monotonic()
    result = make_driver(s3_settings).probe()
    elapsed = time.monotonic() - started
    assert result.error_id == "api.file.test_connection_unreachable.app_error"
    # One attempt of 1 s; a retry, or botocore's extra second waiting for "100 Continue",
    # would take 2 s or more.
    assert 0.9 < elapsed < 1.9


def test_s3_sse_stores_objects_with_aes256(s3_settings, s3_account) -> None:
    s3_settings["AmazonS3SSE"] = True
    driver = make_driver(s3_settings)
    driver.write("encrypted", b"data")
    head = s3_account.client().head_object(
        Bucket=s3_account.bucket, Key=f"{s3_settings['AmazonS3PathPrefix']}/encrypted"
    )
    assert head["ServerSideEncryption"] == "AES256"
    assert driver.read("encrypted") == b"data"


def test_s3_without_sse_stores_objects_unencrypted(s3_settings, s3_account) -> None:
    driver = make_driver(s3_settings)
    driver.write("plain", b"data")
    head = s3_account.client().head_object(
        Bucket=s3_account.bucket, Key=f"{s3_settings['AmazonS3PathPrefix']}/plain"
    )
    assert "ServerSideEncryption" not in head


def test_s3_path_prefix_with_slashes_joins_keys_once(s3_settings, s3_account) -> None:
    prefix = s3_settings["AmazonS3PathPrefix"]
    s3_settings["AmazonS3PathPrefix"] = f"/{prefix}/"
    make_driver(s3_settings).write("x/y", b"1")
    listing = s3_account.client().list_objects_v2(Bucket=s3_account.bucket, Prefix=prefix)
    assert [o["Key"] for o in listing["Contents"]] == [f"{prefix}/x/y"]
