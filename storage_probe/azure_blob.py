"""The ``azureblob`` driver: Azure Blob Storage (or Azurite) with a shared key."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import TypeVar

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.storage.blob import BlobServiceClient, ContainerClient

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
    setting_str,
    timeout_seconds,
)

T = TypeVar("T")

_AUTH_CODES = frozenset(
    {
        "AuthenticationFailed",
        "AuthorizationFailure",
        "AuthorizationPermissionMismatch",
        "InsufficientAccountPermissions",
        "InvalidAuthenticationInfo",
    }
)


class AzureBlobDriver(StorageDriver):
    """Objects are blobs ``<PathPrefix>/<path>`` in one container."""

    name = "azureblob"

    def __init__(
        self,
        *,
        account: str,
        access_key: str,
        container: str,
        path_prefix: str = "",
        endpoint: str = "",
        timeout: float = 30.0,
    ) -> None:
        self.account = account
        self.access_key = access_key
        self.container = container
        self.path_prefix = path_prefix
        self.timeout = timeout
        self.account_url = (
            endpoint.strip().rstrip("/") if endpoint.strip()
            else f"https://{account}.blob.core.windows.net"
        )
        self._container_client: ContainerClient | None = None

    @classmethod
    def from_file_settings(cls, fs: Mapping[str, object]) -> AzureBlobDriver:
        return cls(
            account=setting_str(fs, "AzureStorageAccount"),
            access_key=setting_str(fs, "AzureAccessKey"),
            container=setting_str(fs, "AzureContainer"),
            path_prefix=setting_str(fs, "AzurePathPrefix"),
            endpoint=setting_str(fs, "AzureEndpoint"),
            timeout=timeout_seconds(fs, "AzureRequestTimeoutMilliseconds"),
        )

    def _where(self) -> str:
        return f"container {self.container!r} of account {self.account!r} at {self.account_url}"

    def _client(self) -> ContainerClient:
        if self._container_client is None:
            try:
                base64.b64decode(self.access_key, validate=True)
            except (binascii.Error, ValueError) as exc:
                # The placeholder (32 asterisks) lands here: SPEC 8.18 wants an auth failure.
                raise StorageAuthError(
                    f"The Azure access key for account {self.account!r} is not a valid "
                    f"base64 key. Paste the storage account's access key into AzureAccessKey."
                ) from exc
            try:
                service = BlobServiceClient(
                    self.account_url,
                    credential={"account_name": self.account, "account_key": self.access_key},
                    connection_timeout=self.timeout,
                    read_timeout=self.timeout,
                    # No retries: they would multiply the wait on an unreachable backend.
                    retry_total=0,
                )
            except ValueError as exc:
                raise ConnectionTestError(
                    f"Invalid Azure endpoint {self.account_url!r}: {exc}. Check AzureEndpoint "
                    f"and AzureStorageAccount."
                ) from exc
            self._container_client = service.get_container_client(self.container)
        return self._container_client

    def _map_error(self, exc: AzureError, action: str, name: str) -> StorageError:
        code = _error_code(exc)
        status = getattr(exc, "status_code", None)
        if code == "ContainerNotFound":
            return BucketNotFoundError(
                f"The {self._where()} does not exist. Create it or correct AzureContainer."
            )
        if isinstance(exc, ClientAuthenticationError) or code in _AUTH_CODES or status == 403:
            return StorageAuthError(
                f"Azure refused the credentials for the {self._where()}"
                f"{f' ({code})' if code else ''}. Check AzureStorageAccount and AzureAccessKey."
            )
        if isinstance(exc, (ServiceRequestError, ServiceResponseError)):
            return StorageUnreachableError(
                f"Could not reach {self.account_url} within {self.timeout:g} s. Check "
                f"AzureEndpoint, AzureStorageAccount and the network."
            )
        reason = code or (exc.message if isinstance(exc, HttpResponseError) else str(exc))
        return ConnectionTestError(
            f"Azure could not {action} {name!r} in the {self._where()}: {reason}"
        )

    def _call(self, action: str, name: str, op: Callable[[ContainerClient], T]) -> T:
        client = self._client()
        try:
            return op(client)
        except AzureError as exc:
            raise self._map_error(exc, action, name) from exc

    def _name(self, path: str) -> str:
        return join_prefix(self.path_prefix, clean_relative_path(path))

    def write(self, path: str, data: bytes) -> None:
        name = self._name(path)
        self._call("write", name, lambda c: c.upload_blob(name, data, overwrite=True))

    def read(self, path: str) -> bytes:
        name = self._name(path)

        def op(c: ContainerClient) -> bytes:
            try:
                return c.download_blob(name).readall()
            except ResourceNotFoundError as exc:
                if _error_code(exc) == "BlobNotFound":
                    raise NotFoundError(f"No blob {name!r} in the {self._where()}.") from exc
                raise

        return self._call("read", name, op)

    def delete(self, path: str) -> None:
        name = self._name(path)

        def op(c: ContainerClient) -> None:
            try:
                c.delete_blob(name)
            except ResourceNotFoundError as exc:
                if _error_code(exc) != "BlobNotFound":
                    raise

        self._call("delete", name, op)

    def exists(self, path: str) -> bool:
        name = self._name(path)
        return self._call("look up", name, lambda c: c.get_blob_client(name).exists())


def _error_code(exc: AzureError) -> str:
    # The SDK sets a StorageErrorCode (a str Enum that hashes by member name) or a plain str.
    code = getattr(exc, "error_code", None)
    return str(getattr(code, "value", code) or "")
