"""SPEC 3.3, 8.9, 8.22: Ed25519-signed licenses."""

from __future__ import annotations

import base64
import io
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from admin_api import license_services
from app import create_app
from settings import SettingsError
from utils import now_ms

INVALID = "api.license.add_license.invalid.app_error"


def _upload(client, headers, content: bytes | str):
    data = content.encode() if isinstance(content, str) else content
    return client.post("/api/v4/license", headers=headers,
                       data={"license": (io.BytesIO(data), "authflow.license")},
                       content_type="multipart/form-data")


def _issue(app, key_path, **kw) -> str:
    with app.app_context():
        return json.dumps(license_services.issue_license(key_path.read_bytes(), **kw))


def test_unlicensed_client_view(client, user_headers):
    resp = client.get("/api/v4/license/client", headers=user_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"IsLicensed": "false"}


def test_cli_issued_license_installs_and_shows_in_client_view(app, client, admin_headers, user_headers, license_key):
    result = app.test_cli_runner().invoke(args=[
        "license", "issue", "--private-key", str(license_key), "--customer", "ACME",
        "--sku", "professional", "--feature", "channel_bookmarks", "--days", "30", "--users", "25",
    ])
    assert result.exit_code == 0, result.output
    signed = json.loads(result.output)
    doc = json.loads(base64.b64decode(signed["payload"]))
    assert set(doc) == {"id", "issued_at", "starts_at", "expires_at", "customer", "sku_short_name", "features"}
    assert doc["expires_at"] - doc["starts_at"] == 30 * 24 * 3600 * 1000

    resp = _upload(client, admin_headers, result.output)
    assert resp.status_code == 201, resp.get_json()
    view = resp.get_json()
    assert view["IsLicensed"] == "true" and view["SkuShortName"] == "professional"
    assert view["Users"] == "25" and view["channel_bookmarks"] == "true" and view["Customer"] == "ACME"
    assert client.get("/api/v4/license/client", headers=user_headers).get_json() == view
    with app.app_context():
        assert license_services.has_feature("channel_bookmarks")
        assert not license_services.has_feature("other")
        assert license_services.user_limit() == 25


def test_signature_covers_the_decoded_payload(app, license_key):
    signed = json.loads(_issue(app, license_key))
    payload = base64.b64decode(signed["payload"])
    public = serialization.load_pem_private_key(license_key.read_bytes(), None).public_key()
    public.verify(base64.b64decode(signed["signature"]), payload)  # raises if not


def test_license_from_an_untrusted_key_is_rejected(app, client, admin_headers, license_key, tmp_path):
    other = tmp_path / "other.pem"
    other.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    resp = _upload(client, admin_headers, _issue(app, other))
    assert resp.status_code == 400
    assert resp.get_json()["id"] == INVALID


def test_tampered_payload_is_rejected(app, client, admin_headers, license_key):
    signed = json.loads(_issue(app, license_key, users=10))
    doc = json.loads(base64.b64decode(signed["payload"]))
    doc["features"]["users"] = 10000
    signed["payload"] = base64.b64encode(json.dumps(doc).encode()).decode()
    resp = _upload(client, admin_headers, json.dumps(signed))
    assert resp.status_code == 400 and resp.get_json()["id"] == INVALID


@pytest.mark.parametrize("starts_in_days", [-40, 5])  # expired (30-day license), not started
def test_license_outside_its_window_is_rejected(app, client, admin_headers, license_key, starts_in_days):
    start = now_ms() + starts_in_days * 24 * 3600 * 1000
    resp = _upload(client, admin_headers, _issue(app, license_key, days=30, starts_at=start))
    assert resp.status_code == 400 and resp.get_json()["id"] == INVALID


@pytest.mark.parametrize("content", [b"", b"not json", b'{"payload": "@@", "signature": "x"}', b"[1]", b"\xff\xfe"])
def test_malformed_license_file_is_400(client, admin_headers, license_key, content):
    resp = _upload(client, admin_headers, content)
    assert resp.status_code == 400 and resp.get_json()["id"] == INVALID


def test_missing_license_field_is_400(client, admin_headers):
    resp = client.post("/api/v4/license", headers=admin_headers, data={}, content_type="multipart/form-data")
    assert resp.status_code == 400
    assert resp.get_json()["id"] == "api.license.add_license.no_file.app_error"


def test_license_changes_need_manage_system(client, user_headers):
    assert _upload(client, user_headers, b"junk").get_json()["id"] == "api.context.permissions.app_error"
    assert client.delete("/api/v4/license", headers=user_headers).status_code == 403


def test_delete_removes_the_license(app, client, admin_headers, install_license):
    install_license(features=["x"])
    assert client.get("/api/v4/license/client", headers=admin_headers).get_json()["IsLicensed"] == "true"
    resp = client.delete("/api/v4/license", headers=admin_headers)
    assert resp.status_code == 200 and resp.get_json() == {"status": "OK"}
    assert client.get("/api/v4/license/client", headers=admin_headers).get_json() == {"IsLicensed": "false"}


def test_installed_license_stops_counting_when_its_key_is_withdrawn(app, client, admin_headers, install_license, monkeypatch):
    install_license()
    monkeypatch.setitem(app.config, "LICENSE_PUBLIC_KEYS", "")
    assert client.get("/api/v4/license/client", headers=admin_headers).get_json() == {"IsLicensed": "false"}


def test_bad_public_key_setting_stops_the_server(app_config):
    with pytest.raises(SettingsError, match="AUTHFLOW_LICENSE_PUBLIC_KEYS"):
        create_app({**app_config, "LICENSE_PUBLIC_KEYS": "bm90IGEga2V5"})
