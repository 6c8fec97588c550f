"""SPEC 6: the one interface (write/read/delete/exists, probe) on every driver, real backends."""

from __future__ import annotations

import pytest

from storage_probe import (
    PROBE_NAME_PREFIX,
    InvalidPathError,
    LocalDriver,
    NotFoundError,
    ProbeResult,
    StorageDriver,
    make_driver,
)


def test_write_read_exists_delete_round_trip(driver_settings, stored_names) -> None:
    driver = make_driver(driver_settings)
    data = bytes(range(256)) * 3

    assert not driver.exists("emoji/abc/image")
    driver.write("emoji/abc/image", data)
    assert driver.exists("emoji/abc/image")
    assert driver.read("emoji/abc/image") == data
    assert stored_names(driver_settings) == ["emoji/abc/image"]

    driver.write("emoji/abc/image", b"replaced")
    assert driver.read("emoji/abc/image") == b"replaced"

    driver.delete("emoji/abc/image")
    assert not driver.exists("emoji/abc/image")
    assert stored_names(driver_settings) == []


def test_read_of_a_missing_object_is_not_found(driver_settings) -> None:
    driver = make_driver(driver_settings)
    with pytest.raises(NotFoundError) as exc:
        driver.read("no/such/file")
    assert exc.value.error_id == "api.file.not_found.app_error"
    assert exc.value.status_code == 404


def test_delete_of_a_missing_object_is_not_an_error(driver_settings) -> None:
    driver = make_driver(driver_settings)
    driver.delete("never/written")
    assert not driver.exists("never/written")


def test_probe_with_a_good_configuration_is_ok(driver_settings) -> None:
    assert make_driver(driver_settings).probe() == ProbeResult(ok=True, error_id=None, message=None)


def test_probe_leaves_no_object_behind(driver_settings, stored_names) -> None:
    driver = make_driver(driver_settings)
    driver.write("keep-me", b"x")

    assert driver.probe().ok

    assert stored_names(driver_settings) == ["keep-me"]


def test_probe_writes_authflow_probe_object_under_the_prefix(driver_settings, stored_names) -> None:
    seen: list[tuple[str, list[str]]] = []
    driver = make_driver(driver_settings)
    real_read = driver.read

    def read_and_look(path: str) -> bytes:
        seen.append((path, stored_names(driver_settings)))
        return real_read(path)

    driver.read = read_and_look  # type: ignore[method-assign]
    assert driver.probe().ok

    [(path, names_during_probe)] = seen
    assert path.startswith(PROBE_NAME_PREFIX)
    assert len(path) > len(PROBE_NAME_PREFIX) + 16  # a random suffix, not a fixed name
    assert names_during_probe == [path]  # i.e. <prefix>/authflow-probe-<random>


@pytest.mark.parametrize(
    "path", ["../escape", "a/../../escape", "/etc/passwd", "\\windows", "C:/x", "", "a/\x00b"]
)
def test_paths_that_could_leave_the_root_are_refused(driver_settings, path: str) -> None:
    driver = make_driver(driver_settings)
    for operation in (
        lambda: driver.write(path, b"x"),
        lambda: driver.read(path),
        lambda: driver.exists(path),
        lambda: driver.delete(path),
    ):
        with pytest.raises(InvalidPathError):
            operation()


class _CorruptingDriver(LocalDriver):
    """Reads back something other than what was written."""

    def read(self, path: str) -> bytes:
        return super().read(path) + b"!"


def test_probe_reports_a_data_mismatch_and_still_deletes(local_settings, stored_names) -> None:
    driver: StorageDriver = _CorruptingDriver(str(local_settings["Directory"]))

    result = driver.probe()

    assert not result.ok
    assert result.error_id == "api.file.test_connection.app_error"
    assert "different data" in (result.message or "")
    assert stored_names(local_settings) == []
