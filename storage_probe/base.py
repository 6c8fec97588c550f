"""The storage driver interface, the probe, and the errors every driver raises.

Framework-free on purpose: the admin API maps these errors to responses, the file
store uses the same drivers, and neither needs the other to test a backend.
"""

from __future__ import annotations

import abc
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PROBE_NAME_PREFIX = "authflow-probe-"
PROBE_PAYLOAD = b"authflow storage connection test\n"

# SPEC 6 item 7 and item 4: the machine ids a caller shows.
ERR_GENERIC = "api.file.test_connection.app_error"
ERR_BUCKET = "api.file.test_connection_bucket_does_not_exist.app_error"
ERR_AUTH = "api.file.test_connection_auth.app_error"
ERR_UNREACHABLE = "api.file.test_connection_unreachable.app_error"
ERR_UNSUPPORTED_DRIVER = "api.file.test_connection_unsupported_driver.app_error"
ERR_MISSING_S3_BUCKET = "api.admin.test_s3.missing_s3_bucket"
ERR_MISSING_AZURE_FIELD = "api.admin.test_azure.missing_azure_field"
# Not in SPEC 6: used by the file store, which answers 404 / 400 for them.
ERR_NOT_FOUND = "api.file.not_found.app_error"
ERR_INVALID_PATH = "api.file.invalid_path.app_error"


class StorageError(Exception):
    """A storage failure with a machine id and a message a human can act on.

    ``status_code`` is a hint for the HTTP layer; this package never builds responses.
    """

    error_id: str = ERR_GENERIC
    status_code: int = 500

    def __init__(self, message: str, *, error_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if error_id is not None:
            self.error_id = error_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.error_id!r}, {self.message!r})"


class ConnectionTestError(StorageError):
    """Generic backend failure: local directory not writable, data mismatch, anything else."""

    error_id = ERR_GENERIC


class BucketNotFoundError(StorageError):
    """The S3 bucket or Azure container does not exist."""

    error_id = ERR_BUCKET


class StorageAuthError(StorageError):
    """The backend refused the credentials (or they could not even be used)."""

    error_id = ERR_AUTH


class StorageUnreachableError(StorageError):
    """Network failure or timeout talking to the backend."""

    error_id = ERR_UNREACHABLE


class NotFoundError(StorageError):
    """``read`` of an object that does not exist."""

    error_id = ERR_NOT_FOUND
    status_code = 404


class InvalidPathError(StorageError):
    """A path that is empty, absolute or climbs out of the storage root."""

    error_id = ERR_INVALID_PATH
    status_code = 400


class StorageConfigError(StorageError):
    """The FileSettings cannot describe a usable backend (SPEC 6 item 4): a 400, not a 500."""

    status_code = 400

    def __init__(self, error_id: str, message: str, missing_fields: Iterable[str] = ()) -> None:
        super().__init__(message, error_id=error_id)
        self.missing_fields: tuple[str, ...] = tuple(missing_fields)


class UnsupportedDriverError(StorageConfigError):
    """``DriverName`` is empty or names no driver in the registry."""

    def __init__(self, driver_name: object) -> None:
        shown = driver_name if isinstance(driver_name, str) and driver_name else "(empty)"
        super().__init__(
            ERR_UNSUPPORTED_DRIVER,
            f"Unsupported file storage driver {shown!r}; use one of: local, amazons3, azureblob.",
            ("DriverName",) if not driver_name else (),
        )


@dataclass(frozen=True)
class ProbeResult:
    """Outcome of ``StorageDriver.probe``: ``ok``, or the failure's id and message."""

    ok: bool
    error_id: str | None = None
    message: str | None = None

    @classmethod
    def failure(cls, error: StorageError) -> ProbeResult:
        return cls(ok=False, error_id=error.error_id, message=error.message)


def clean_relative_path(path: str) -> str:
    """Return ``path`` normalised to ``a/b/c``; raise InvalidPathError if it could escape the root.

    Applied by every driver so a path means the same thing on every backend.
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        raise InvalidPathError(f"Invalid storage path {path!r}.")
    unified = path.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        raise InvalidPathError(f"Storage path {path!r} must be relative.")
    parts = [p for p in unified.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise InvalidPathError(f"Storage path {path!r} must stay inside the storage root.")
    return "/".join(parts)


def join_prefix(prefix: str | None, path: str) -> str:
    """Join a PathPrefix and an already cleaned relative path into an object key."""
    prefix = (prefix or "").strip().strip("/")
    return f"{prefix}/{path}" if prefix else path


DEFAULT_REQUEST_TIMEOUT_MS = 30000


def setting_str(fs: Mapping[str, object], key: str) -> str:
    """A FileSettings text field, stripped; ``""`` when absent or not text."""
    value = fs.get(key)
    return value.strip() if isinstance(value, str) else ""


def setting_bool(fs: Mapping[str, object], key: str, default: bool) -> bool:
    """A FileSettings flag; accepts JSON booleans and, from environment overrides, text."""
    value = fs.get(key)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip():
        return value.strip().lower() in ("true", "1", "yes", "on")
    return default


def timeout_seconds(fs: Mapping[str, object], key: str) -> float:
    """A ``*RequestTimeoutMilliseconds`` field in seconds; 30 s when unset or not positive."""
    value = fs.get(key)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        value = DEFAULT_REQUEST_TIMEOUT_MS
    return value / 1000.0


class StorageDriver(abc.ABC):
    """One storage backend. Paths are relative, ``/``-separated, and never leave the root.

    Every method raises only StorageError subclasses for backend trouble.
    """

    name: str = ""

    @abc.abstractmethod
    def write(self, path: str, data: bytes) -> None:
        """Store ``data`` at ``path``, replacing what was there."""

    @abc.abstractmethod
    def read(self, path: str) -> bytes:
        """Return the bytes at ``path``; raise NotFoundError if there are none."""

    @abc.abstractmethod
    def delete(self, path: str) -> None:
        """Remove ``path``; deleting what is not there is not an error."""

    @abc.abstractmethod
    def exists(self, path: str) -> bool:
        """Whether an object is stored at ``path``."""

    def probe(self) -> ProbeResult:
        """Write a small object, read it back, compare, delete it (SPEC 6 item 6).

        Never raises for backend trouble: the first failure becomes the result. The delete is
        attempted whenever the write succeeded, even if the read or the comparison failed.
        """
        name = f"{PROBE_NAME_PREFIX}{secrets.token_hex(16)}"
        payload = PROBE_PAYLOAD + name.encode()
        try:
            self.write(name, payload)
        except StorageError as exc:
            # Nothing was confirmed written; a delete here would only double the wait
            # on an unreachable backend (SPEC: never longer than the request timeout).
            return ProbeResult.failure(exc)
        failure: StorageError | None = None
        try:
            if self.read(name) != payload:
                failure = ConnectionTestError(
                    f"The {self.name} storage returned different data than was written "
                    f"to {name!r}."
                )
        except StorageError as exc:
            failure = exc
        finally:
            try:
                self.delete(name)
            except StorageError as exc:
                failure = failure or exc
        return ProbeResult.failure(failure) if failure else ProbeResult(ok=True)
