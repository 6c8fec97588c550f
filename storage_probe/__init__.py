"""File storage drivers behind one interface, and the connection probe (SPEC 6).

Framework-free: nothing here imports Flask or the rest of authflow.

    validate_file_settings(fs)      # raises StorageConfigError (a 400) for SPEC 6 item 4
    driver = make_driver(fs)        # validates, then builds the driver for fs["DriverName"]
    result = driver.probe()         # ProbeResult(ok, error_id, message); never raises
"""

from __future__ import annotations

from collections.abc import Mapping

from .azure_blob import AzureBlobDriver
from .base import (
    ERR_AUTH,
    ERR_BUCKET,
    ERR_GENERIC,
    ERR_INVALID_PATH,
    ERR_MISSING_AZURE_FIELD,
    ERR_MISSING_S3_BUCKET,
    ERR_NOT_FOUND,
    ERR_UNREACHABLE,
    ERR_UNSUPPORTED_DRIVER,
    PROBE_NAME_PREFIX,
    BucketNotFoundError,
    ConnectionTestError,
    InvalidPathError,
    NotFoundError,
    ProbeResult,
    StorageAuthError,
    StorageConfigError,
    StorageDriver,
    StorageError,
    StorageUnreachableError,
    UnsupportedDriverError,
    setting_str,
)
from .local import LocalDriver
from .s3 import S3Driver

__all__ = [
    "DRIVERS",
    "ERR_AUTH",
    "ERR_BUCKET",
    "ERR_GENERIC",
    "ERR_INVALID_PATH",
    "ERR_MISSING_AZURE_FIELD",
    "ERR_MISSING_S3_BUCKET",
    "ERR_NOT_FOUND",
    "ERR_UNREACHABLE",
    "ERR_UNSUPPORTED_DRIVER",
    "PROBE_NAME_PREFIX",
    "AzureBlobDriver",
    "BucketNotFoundError",
    "ConnectionTestError",
    "InvalidPathError",
    "LocalDriver",
    "NotFoundError",
    "ProbeResult",
    "S3Driver",
    "StorageAuthError",
    "StorageConfigError",
    "StorageDriver",
    "StorageError",
    "StorageUnreachableError",
    "UnsupportedDriverError",
    "make_driver",
    "validate_file_settings",
]

# FileSettings.DriverName -> driver class (each has from_file_settings(fs)).
DRIVERS: dict[str, type[LocalDriver] | type[S3Driver] | type[AzureBlobDriver]] = {
    "local": LocalDriver,
    "amazons3": S3Driver,
    "azureblob": AzureBlobDriver,
}

_AZURE_REQUIRED = ("AzureStorageAccount", "AzureContainer", "AzureAccessKey")


def validate_file_settings(fs: Mapping[str, object]) -> None:
    """Check that ``fs`` names a driver and the fields it cannot work without (SPEC 6 item 4).

    Raises StorageConfigError: UnsupportedDriverError for an empty or unknown DriverName,
    ``api.admin.test_s3.missing_s3_bucket`` for amazons3 without AmazonS3Bucket (a missing
    region means us-east-1, SPEC 8.18), ``api.admin.test_azure.missing_azure_field`` for
    azureblob without AzureStorageAccount, AzureContainer or AzureAccessKey.
    """
    driver = setting_str(fs, "DriverName")
    if driver not in DRIVERS:
        raise UnsupportedDriverError(driver)
    if driver == "amazons3" and not setting_str(fs, "AmazonS3Bucket"):
        raise StorageConfigError(
            ERR_MISSING_S3_BUCKET,
            "AmazonS3Bucket is required for the amazons3 driver.",
            ("AmazonS3Bucket",),
        )
    if driver == "azureblob":
        missing = [field for field in _AZURE_REQUIRED if not setting_str(fs, field)]
        if missing:
            raise StorageConfigError(
                ERR_MISSING_AZURE_FIELD,
                f"Required for the azureblob driver: {', '.join(missing)}.",
                missing,
            )


def make_driver(file_settings: Mapping[str, object]) -> StorageDriver:
    """Build the driver ``file_settings["DriverName"]`` names.

    No request reaches the backend here; only amazons3 with empty keys lets boto3 look up
    instance credentials (environment, config files, instance metadata), as Mattermost does.

    Raises StorageConfigError (see validate_file_settings).
    """
    validate_file_settings(file_settings)
    return DRIVERS[setting_str(file_settings, "DriverName")].from_file_settings(file_settings)
