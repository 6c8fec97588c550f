"""SPEC 6 / 8.18, local driver: the probe file, an unwritable Directory, escapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from storage_probe import InvalidPathError, make_driver


def test_local_probe_file_is_directly_in_directory(local_settings) -> None:
    directory = Path(str(local_settings["Directory"]))
    driver = make_driver(local_settings)
    seen: list[list[str]] = []
    real_read = driver.read

    def read_and_look(path: str) -> bytes:
        seen.append(os.listdir(directory))
        return real_read(path)

    driver.read = read_and_look  # type: ignore[method-assign]
    assert driver.probe().ok
    [[name]] = seen
    assert name.startswith("authflow-probe-")
    assert os.listdir(directory) == []


def test_local_directory_not_writable_is_generic_error_naming_it(tmp_path, file_settings) -> None:
    # Tests may run as root, which can write anywhere: a path below a regular file cannot
    # be created by anyone.
    a_file = tmp_path / "plain-file"
    a_file.write_bytes(b"")
    directory = f"{a_file}/sub"

    result = make_driver(file_settings(DriverName="local", Directory=directory)).probe()

    assert not result.ok
    assert result.error_id == "api.file.test_connection.app_error"
    assert directory in (result.message or "")


def test_local_symlink_out_of_directory_is_refused(local_settings, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"s")
    os.symlink(outside, Path(str(local_settings["Directory"])) / "link")
    driver = make_driver(local_settings)

    with pytest.raises(InvalidPathError):
        driver.read("link/secret")
    with pytest.raises(InvalidPathError):
        driver.write("link/new", b"x")
    assert sorted(os.listdir(outside)) == ["secret"]


def test_local_write_creates_parent_directories_and_leaves_no_temp_file(local_settings) -> None:
    driver = make_driver(local_settings)
    driver.write("a/b/c.txt", b"hello")
    root = Path(str(local_settings["Directory"]))
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"hello"
    assert os.listdir(root / "a" / "b") == ["c.txt"]
