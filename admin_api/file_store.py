"""The file store: the configured storage driver (SPEC 6), and the errors it maps to.

Drivers come from storage_probe; this module picks one for the running configuration (or a
given FileSettings section), caches it per process by its settings, and turns storage
errors into AppErrors: a StorageConfigError is a 400 for a sent configuration, and any
backend failure is a 500 carrying the driver's specific id (SPEC 6.7).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import storage_probe
from admin_api import config_store
from errors import AppError, InvalidInput, NotFound
from storage_probe import ProbeResult, StorageConfigError, StorageDriver, StorageError

_CACHE_SIZE = 8
_cache: OrderedDict[str, StorageDriver] = OrderedDict()
_cache_lock = threading.Lock()


class StorageFailure(AppError):
    """A backend failure: 500 with the storage error's id and its actionable message."""

    status = 500


def backend_error(err: StorageError) -> AppError:
    """The AppError for a StorageError raised while serving a request."""
    if isinstance(err, storage_probe.NotFoundError):
        return NotFound("The file is not in the file store.", error_id="app.file_info.get.app_error")
    # Includes a StorageConfigError of the running configuration: a server problem, not the caller's.
    return StorageFailure(err.message, error_id=err.error_id)


def config_error(err: StorageConfigError) -> InvalidInput:
    """The 400 for a sent FileSettings section that names no usable backend (SPEC 6.4)."""
    return InvalidInput(err.message, error_id=err.error_id)


def driver_for(file_settings: dict) -> StorageDriver:
    """A driver for `file_settings` (cached per process). Raises StorageConfigError."""
    key = json.dumps(file_settings, sort_keys=True, default=str)
    with _cache_lock:
        driver = _cache.get(key)
        if driver is not None:
            _cache.move_to_end(key)
            return driver
    driver = storage_probe.make_driver(file_settings)
    with _cache_lock:
        _cache[key] = driver
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return driver


def running_driver() -> StorageDriver:
    """The driver of the running configuration. Raises StorageFailure when it is unusable."""
    try:
        return driver_for(config_store.get_config()["FileSettings"])
    except StorageConfigError as err:
        raise backend_error(err) from err


def probe_settings(file_settings: dict) -> ProbeResult:
    """Write, read back and delete a probe object with `file_settings` (never raises for
    backend trouble). Raises StorageConfigError for settings naming no usable backend.
    """
    return storage_probe.make_driver(file_settings).probe()


def probe_running() -> ProbeResult:
    """The probe of the running file store (ping, support packet); never raises."""
    try:
        return driver_for(config_store.get_config()["FileSettings"]).probe()
    except StorageError as err:
        return ProbeResult.failure(err)


def write(path: str, data: bytes) -> None:
    """Store bytes in the running file store. Raises StorageFailure."""
    try:
        running_driver().write(path, data)
    except StorageError as err:
        raise backend_error(err) from err


def read(path: str) -> bytes:
    """Bytes from the running file store. Raises NotFound or StorageFailure."""
    try:
        return running_driver().read(path)
    except StorageError as err:
        raise backend_error(err) from err


def delete(path: str) -> None:
    """Remove an object from the running file store (missing is fine). Raises StorageFailure."""
    try:
        running_driver().delete(path)
    except StorageError as err:
        raise backend_error(err) from err
