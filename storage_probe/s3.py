"""The ``amazons3`` driver: AWS S3 or any S3-compatible server, through boto3."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

import boto3
import botocore.exceptions as bexc
from botocore.config import Config

from .base import (
    BucketNotFoundError,
    ConnectionTestError,
    NotFoundError,
    StorageAuthError,
    StorageDriver,
    StorageError,
    StorageUnreachableError,
    clean_relative_path,
    join_prefix,
    setting_bool,
    setting_str,
    timeout_seconds,
)

log = logging.getLogger(__name__)

DEFAULT_REGION = "us-east-1"
_AUTH_CODES = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "InvalidToken",
        "ExpiredToken",
        "InvalidClientTokenId",
        "403",
        "Forbidden",
    }
)
_MISSING_OBJECT_CODES = frozenset({"NoSuchKey", "404", "NotFound"})

# A new boto3 Session reloads the service models (~0.5 s); one shared session keeps
# make_driver cheap. botocore sessions are not thread-safe, so client creation is locked.
_SESSION = boto3.session.Session()
_SESSION_LOCK = threading.Lock()


class S3Driver(StorageDriver):
    """Objects are keys ``<PathPrefix>/<path>`` in one bucket."""

    name = "amazons3"

    def __init__(
        self,
        *,
        bucket: str,
        access_key_id: str = "",
        secret_access_key: str = "",
        region: str = "",
        endpoint: str = "",
        ssl: bool = True,
        sign_v2: bool = False,
        sse: bool = False,
        trace: bool = False,
        path_prefix: str = "",
        timeout: float = 30.0,
    ) -> None:
        self.bucket = bucket
        self.path_prefix = path_prefix
        self.sse = sse
        self.timeout = timeout
        self.region = region or DEFAULT_REGION
        endpoint = endpoint.strip().rstrip("/")
        if endpoint and "://" not in endpoint:
            endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
        self.endpoint_url = endpoint or None
        config = Config(
            region_name=self.region,
            signature_version="s3" if sign_v2 else "s3v4",
            connect_timeout=timeout,
            read_timeout=timeout,
            # One attempt: a retry would let an unreachable backend hold the caller
            # for a multiple of RequestTimeoutMilliseconds (SPEC 6 item 7).
            retries={"mode": "standard", "total_max_attempts": 1},
            # Custom endpoints are usually IPs or hosts without wildcard DNS for buckets.
            s3={"addressing_style": "path" if self.endpoint_url else "auto"},
            # Many S3-compatible servers reject the CRC checksums boto sends by default.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        with _SESSION_LOCK:
            self.client = _SESSION.client(
                "s3",
                region_name=self.region,
                endpoint_url=self.endpoint_url,
                use_ssl=ssl,
                # Empty keys: fall back to boto's chain (instance role), as Mattermost does.
                aws_access_key_id=access_key_id or None,
                aws_secret_access_key=secret_access_key or None,
                config=config,
            )
        # Last on the generic event: botocore adds the header in a "before-call.s3" handler.
        self.client.meta.events.register_last("before-call.s3", _drop_expect_continue)
        if trace:
            self.client.meta.events.register("before-send.s3", _trace_request)

    @classmethod
    def from_file_settings(cls, fs: Mapping[str, object]) -> S3Driver:
        return cls(
            bucket=setting_str(fs, "AmazonS3Bucket"),
            access_key_id=setting_str(fs, "AmazonS3AccessKeyId"),
            secret_access_key=setting_str(fs, "AmazonS3SecretAccessKey"),
            region=setting_str(fs, "AmazonS3Region"),
            endpoint=setting_str(fs, "AmazonS3Endpoint"),
            ssl=setting_bool(fs, "AmazonS3SSL", True),
            sign_v2=setting_bool(fs, "AmazonS3SignV2", False),
            sse=setting_bool(fs, "AmazonS3SSE", False),
            trace=setting_bool(fs, "AmazonS3Trace", False),
            path_prefix=setting_str(fs, "AmazonS3PathPrefix"),
            timeout=timeout_seconds(fs, "AmazonS3RequestTimeoutMilliseconds"),
        )

    def _key(self, path: str) -> str:
        return join_prefix(self.path_prefix, clean_relative_path(path))

    def _where(self) -> str:
        return f"bucket {self.bucket!r} at {self.endpoint_url or 'AWS S3'} (region {self.region})"

    def _map_error(self, exc: Exception, action: str, key: str) -> StorageError:
        if isinstance(exc, bexc.ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code == "NoSuchBucket":
                return BucketNotFoundError(
                    f"The {self._where()} does not exist. Create it or correct AmazonS3Bucket."
                )
            if code in _AUTH_CODES or status == 403:
                return StorageAuthError(
                    f"S3 refused the credentials for the {self._where()} ({code}). Check "
                    f"AmazonS3AccessKeyId, AmazonS3SecretAccessKey and the key's permissions."
                )
            return ConnectionTestError(
                f"S3 could not {action} {key!r} in the {self._where()}: "
                f"{code} {error.get('Message', '')}".rstrip()
            )
        if isinstance(exc, (bexc.NoCredentialsError, bexc.PartialCredentialsError)):
            return StorageAuthError(
                f"No usable S3 credentials for the {self._where()}. Set AmazonS3AccessKeyId "
                f"and AmazonS3SecretAccessKey."
            )
        if isinstance(exc, (bexc.ConnectionError, bexc.HTTPClientError)):
            return StorageUnreachableError(
                f"Could not reach the {self._where()} within {self.timeout:g} s: {exc}. "
                f"Check AmazonS3Endpoint, AmazonS3SSL and the network."
            )
        return ConnectionTestError(f"S3 could not {action} {key!r} in the {self._where()}: {exc}")

    def write(self, path: str, data: bytes) -> None:
        key = self._key(path)
        extra = {"ServerSideEncryption": "AES256"} if self.sse else {}
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data, **extra)
        except (bexc.BotoCoreError, bexc.ClientError) as exc:
            raise self._map_error(exc, "write", key) from exc

    def read(self, path: str) -> bytes:
        key = self._key(path)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
            return response["Body"].read()
        except bexc.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING_OBJECT_CODES:
                raise NotFoundError(f"No object {key!r} in the {self._where()}.") from exc
            raise self._map_error(exc, "read", key) from exc
        except bexc.BotoCoreError as exc:
            raise self._map_error(exc, "read", key) from exc

    def delete(self, path: str) -> None:
        key = self._key(path)
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except (bexc.BotoCoreError, bexc.ClientError) as exc:
            raise self._map_error(exc, "delete", key) from exc

    def exists(self, path: str) -> bool:
        key = self._key(path)
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
            return True
        except bexc.ClientError as exc:
            # HEAD has no body, so a missing bucket also reads as a plain 404 here.
            if exc.response.get("Error", {}).get("Code") in _MISSING_OBJECT_CODES:
                return False
            raise self._map_error(exc, "look up", key) from exc
        except bexc.BotoCoreError as exc:
            raise self._map_error(exc, "look up", key) from exc


def _drop_expect_continue(params, **_kwargs) -> None:  # type: ignore[no-untyped-def]
    # botocore waits a fixed extra second for "100 Continue" from a server that says
    # nothing, which would break SPEC 6's bound of RequestTimeoutMilliseconds per request.
    # The cost: a refused upload is sent in full before the refusal is read.
    params.get("headers", {}).pop("Expect", None)


def _trace_request(request, **_kwargs) -> None:  # type: ignore[no-untyped-def]
    # Method and URL only: headers carry the signature.
    log.debug("S3 %s %s", request.method, request.url)
