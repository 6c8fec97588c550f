"""SPEC 4.10, 8.16: files stored through each configured driver, public links and downloads."""

from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import pytest
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import encode_multipart

from admin_api.file_services import link_hash
from admin_api.models import FileInfo
from extensions import db
from tests.admin_api.helpers import stored_names
from tests.conftest import BASE_URL
from utils import new_id

DRIVERS = ("local", "amazons3", "azureblob")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _upload(client, headers, *files, channel_id=None):
    values = MultiDict([("files", FileStorage(io.BytesIO(content), name)) for name, content in files])
    if channel_id is not None:
        values.add("channel_id", channel_id)
    # Encoded in memory: the test client would spool a large body to a file it never closes.
    boundary, body = encode_multipart(values)
    return client.post("/api/v4/files", headers=headers, data=body,
                       content_type=f"multipart/form-data; boundary={boundary}")


@pytest.fixture
def running_store(set_config, file_settings):
    """running_store(driver, **file_settings): make it the running file store, links on."""

    def run(driver: str, **overrides) -> dict:
        fs = file_settings(driver, EnablePublicLink=True, PublicLinkSalt="a-salt-for-links", **overrides)
        set_config({"FileSettings": fs})
        return fs

    return run


def _split(link: str) -> tuple[str, str]:
    parts = urlsplit(link)
    return parts.path, parse_qs(parts.query)["h"][0]


@pytest.mark.parametrize("driver", DRIVERS)
def test_upload_link_and_public_download_on_each_driver(client, admin_headers, running_store, driver):
    fs = running_store(driver)
    resp = _upload(client, admin_headers, ("picture.PNG", PNG), ("notes.html", b"<script>x</script>"))
    assert resp.status_code == 201, resp.get_json()
    infos = resp.get_json()["file_infos"]
    assert [(i["name"], i["extension"], i["size"], i["mime_type"]) for i in infos] == [
        ("picture.PNG", "png", len(PNG), "image/png"),
        ("notes.html", "html", 18, "text/html"),
    ]
    assert all(i["delete_at"] == 0 and i["create_at"] > 0 for i in infos)
    stored = stored_names(fs)
    assert len(stored) == 2 and all(any(i["id"] in name for name in stored) for i in infos)

    png_id, html_id = infos[0]["id"], infos[1]["id"]
    link = client.get(f"/api/v4/files/{png_id}/link", headers=admin_headers).get_json()["link"]
    assert link.startswith(f"{BASE_URL}/files/{png_id}/public?h=")
    path, h = _split(link)
    assert h == link_hash("a-salt-for-links", png_id) and "=" not in h

    resp = client.get(f"{path}?h={h}")
    assert resp.status_code == 200
    assert resp.data == PNG and resp.mimetype == "image/png"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Content-Disposition"].startswith("inline")

    path, h = _split(client.get(f"/api/v4/files/{html_id}/link", headers=admin_headers).get_json()["link"])
    resp = client.get(f"{path}?h={h}")
    assert resp.status_code == 200 and resp.data == b"<script>x</script>"
    assert resp.headers["Content-Disposition"].startswith("attachment")
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("mime_name, inline", [
    ("a.png", True), ("a.jpg", True), ("a.gif", True), ("a.webp", True), ("a.txt", True),
    ("a.svg", False), ("a.pdf", False), ("a.bin", False), ("noextension", False),
])
def test_only_safe_types_are_shown_inline(client, admin_headers, running_store, mime_name, inline):
    running_store("local")
    file_id = _upload(client, admin_headers, (mime_name, b"data")).get_json()["file_infos"][0]["id"]
    path, h = _split(client.get(f"/api/v4/files/{file_id}/link", headers=admin_headers).get_json()["link"])
    disposition = client.get(f"{path}?h={h}").headers["Content-Disposition"]
    assert disposition.startswith("inline" if inline else "attachment")


def test_link_is_403_when_public_links_are_off(client, admin_headers, set_config, file_settings):
    set_config({"FileSettings": file_settings("local")})
    file_id = _upload(client, admin_headers, ("a.txt", b"x")).get_json()["file_infos"][0]["id"]
    resp = client.get(f"/api/v4/files/{file_id}/link", headers=admin_headers)
    assert resp.status_code == 403
    assert resp.get_json()["id"] == "api.file.get_public_link.disabled.app_error"


def test_public_download_is_403_when_public_links_are_off(client, admin_headers, running_store, set_config):
    running_store("local")
    file_id = _upload(client, admin_headers, ("a.txt", b"x")).get_json()["file_infos"][0]["id"]
    h = _split(client.get(f"/api/v4/files/{file_id}/link", headers=admin_headers).get_json()["link"])[1]
    set_config({"FileSettings": {"EnablePublicLink": False}})
    resp = client.get(f"/files/{file_id}/public?h={h}")
    assert resp.status_code == 403
    assert resp.get_json()["id"] == "api.file.get_public_link.disabled.app_error"


@pytest.mark.parametrize("query", ["", "?h=", "?h=wrong", "?h=" + "A" * 43])
def test_public_download_missing_or_wrong_hash_is_400(client, admin_headers, running_store, query):
    running_store("local")
    file_id = _upload(client, admin_headers, ("a.txt", b"x")).get_json()["file_infos"][0]["id"]
    resp = client.get(f"/files/{file_id}/public{query}")
    assert resp.status_code == 400
    assert resp.get_json()["id"] == "api.file.get_file.public_invalid.app_error"


def test_public_download_unknown_or_deleted_file_is_404(app, client, admin_headers, running_store):
    running_store("local")
    unknown = new_id()
    resp = client.get(f"/files/{unknown}/public?h={link_hash('a-salt-for-links', unknown)}")
    assert resp.status_code == 404 and resp.get_json()["id"] == "app.file_info.get.app_error"

    file_id = _upload(client, admin_headers, ("a.txt", b"x")).get_json()["file_infos"][0]["id"]
    with app.app_context():
        db.session.get(FileInfo, file_id).delete_at = 1
        db.session.commit()
    resp = client.get(f"/files/{file_id}/public?h={link_hash('a-salt-for-links', file_id)}")
    assert resp.status_code == 404


def test_link_of_unknown_or_malformed_id(client, admin_headers, running_store):
    running_store("local")
    resp = client.get(f"/api/v4/files/{new_id()}/link", headers=admin_headers)
    assert resp.status_code == 404 and resp.get_json()["id"] == "app.file_info.get.app_error"
    resp = client.get("/api/v4/files/not-an-id/link", headers=admin_headers)
    assert resp.status_code == 400 and resp.get_json()["id"] == "api.context.invalid_url_param.app_error"


def test_link_to_someone_elses_file_is_403(client, admin_headers, user_headers, running_store):
    running_store("local")
    file_id = _upload(client, admin_headers, ("a.txt", b"x")).get_json()["file_infos"][0]["id"]
    resp = client.get(f"/api/v4/files/{file_id}/link", headers=user_headers)
    assert resp.status_code == 403 and resp.get_json()["id"] == "api.context.permissions.app_error"


def test_ordinary_users_upload_and_share_their_own_files(client, user_headers, running_store):
    running_store("local")
    resp = _upload(client, user_headers, ("mine.txt", b"mine"))
    assert resp.status_code == 201
    file_id = resp.get_json()["file_infos"][0]["id"]
    assert client.get(f"/api/v4/files/{file_id}/link", headers=user_headers).status_code == 200


def test_upload_needs_a_token(client):
    resp = _upload(client, {}, ("a.txt", b"x"))
    assert resp.status_code == 401


def test_upload_without_files_is_400(client, admin_headers, running_store):
    running_store("local")
    resp = client.post("/api/v4/files", headers=admin_headers, data={"channel_id": new_id()},
                       content_type="multipart/form-data")
    assert resp.status_code == 400 and resp.get_json()["id"] == "api.context.invalid_body_param.app_error"


def test_upload_with_a_bad_channel_id_is_400(client, admin_headers, running_store):
    running_store("local")
    resp = _upload(client, admin_headers, ("a.txt", b"x"), channel_id="nope")
    assert resp.status_code == 400


def test_file_names_lose_their_folders(client, admin_headers, running_store):
    running_store("local")
    resp = _upload(client, admin_headers, ("../../etc/passwd.txt", b"x"))
    assert resp.status_code == 201
    assert resp.get_json()["file_infos"][0]["name"] == "passwd.txt"


def test_file_over_max_file_size_is_413(app, client, admin_headers, running_store):
    fs = running_store("local", MaxFileSize=1024)
    resp = _upload(client, admin_headers, ("big.bin", b"x" * 2000))
    assert resp.status_code == 413
    assert resp.get_json()["id"] == "api.file.upload_file.too_large.app_error"
    resp = _upload(client, admin_headers, ("huge.bin", b"x" * (200 * 1024)))
    assert resp.status_code == 413
    assert stored_names(fs) == []
    with app.app_context():
        assert db.session.query(FileInfo).count() == 0


def test_uploads_larger_than_the_api_payload_limit_use_max_file_size(client, admin_headers, running_store):
    running_store("local")
    resp = _upload(client, admin_headers, ("two-mib.bin", b"x" * (2 * 1024 * 1024)))
    assert resp.status_code == 201, resp.get_json()


@pytest.mark.parametrize("driver, broken, error_id", [
    ("amazons3", {"AmazonS3Bucket": "no-such-bucket"}, "api.file.test_connection_bucket_does_not_exist.app_error"),
    ("azureblob", {"AzureAccessKey": "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk="}, "api.file.test_connection_auth.app_error"),
])
def test_backend_failure_on_upload_is_500_with_its_id_and_stores_nothing(app, client, admin_headers, running_store,
                                                                          driver, broken, error_id):
    running_store(driver, **broken)
    resp = _upload(client, admin_headers, ("a.txt", b"x"))
    assert resp.status_code == 500 and resp.get_json()["id"] == error_id
    with app.app_context():
        assert db.session.query(FileInfo).count() == 0
