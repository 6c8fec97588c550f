"""The ``local`` driver: files under ``FileSettings.Directory``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping

from .base import (
    ConnectionTestError,
    InvalidPathError,
    NotFoundError,
    StorageDriver,
    clean_relative_path,
    setting_str,
)

# Mattermost's default for FileSettings.Directory.
DEFAULT_DIRECTORY = "./data/"


class LocalDriver(StorageDriver):
    """Stores each object as a file below ``directory``; writes are atomic (temp file + rename)."""

    name = "local"

    def __init__(self, directory: str) -> None:
        self.directory = directory or DEFAULT_DIRECTORY

    @classmethod
    def from_file_settings(cls, fs: Mapping[str, object]) -> LocalDriver:
        return cls(setting_str(fs, "Directory"))

    def _full_path(self, path: str) -> str:
        relative = clean_relative_path(path)
        root = os.path.realpath(self.directory)
        full = os.path.join(root, *relative.split("/"))
        # The lexical check cannot see symlinks inside the directory that point out of it.
        if os.path.commonpath([root, os.path.realpath(full)]) != root:
            raise InvalidPathError(f"Storage path {path!r} leads outside {self.directory!r}.")
        return full

    def _error(self, action: str, path: str, exc: OSError) -> ConnectionTestError:
        reason = exc.strerror or type(exc).__name__
        return ConnectionTestError(
            f"Could not {action} {path!r} in the local storage directory "
            f"{self.directory!r}: {reason}. Check that the directory exists and that the "
            f"server's user can write to it."
        )

    def write(self, path: str, data: bytes) -> None:
        full = self._full_path(path)
        parent = os.path.dirname(full)
        tmp_name = None
        try:
            os.makedirs(parent, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(dir=parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp_name, full)
            tmp_name = None
        except OSError as exc:
            raise self._error("write", path, exc) from exc
        finally:
            if tmp_name is not None:
                try:
                    os.unlink(tmp_name)
                except OSError:
                    pass

    def read(self, path: str) -> bytes:
        full = self._full_path(path)
        try:
            with open(full, "rb") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise NotFoundError(f"No file {path!r} in the local storage.") from exc
        except OSError as exc:
            raise self._error("read", path, exc) from exc

    def delete(self, path: str) -> None:
        full = self._full_path(path)
        try:
            os.unlink(full)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:
            raise self._error("delete", path, exc) from exc

    def exists(self, path: str) -> bool:
        return os.path.isfile(self._full_path(path))
