"""Licenses (SPEC 3.3, 8.9, 8.22): Ed25519-signed JSON documents, verified on every use.

A license file is `{"payload": base64(JSON document), "signature": base64(Ed25519 signature
over the decoded payload bytes)}`. It is accepted when the signature verifies against one
of AUTHFLOW_LICENSE_PUBLIC_KEYS and now is inside [starts_at, expires_at). The installed
file is stored as sent and verified again whenever it is read, so an expired license or a
withdrawn key stops counting without anyone removing it.
"""

from __future__ import annotations

import base64
import binascii
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from flask import current_app
from marshmallow import ValidationError

from admin_api.models import LicenseRecord
from errors import InvalidInput
from extensions import db
from schemas.license import LicenseDocumentSchema, LicenseFileSchema
from settings import SettingsError
from utils import new_id, now_ms

INVALID_ID = "api.license.add_license.invalid.app_error"
NO_FILE_ID = "api.license.add_license.no_file.app_error"
MAX_LICENSE_BYTES = 64 * 1024
DAY_MS = 24 * 3600 * 1000


class InvalidLicense(InvalidInput):
    error_id = INVALID_ID
    default_message = "Invalid license file."


def parse_public_keys(raw: str) -> list[Ed25519PublicKey]:
    """AUTHFLOW_LICENSE_PUBLIC_KEYS: comma-separated standard base64 of raw 32-byte keys.

    Raises SettingsError naming the bad entry (the server does not start with one).
    """
    keys = []
    for position, item in enumerate(p.strip() for p in (raw or "").split(",")):
        if not item:
            continue
        try:
            data = base64.b64decode(item, validate=True)
            if len(data) != 32:
                raise ValueError("not 32 bytes")
            keys.append(Ed25519PublicKey.from_public_bytes(data))
        except (ValueError, binascii.Error) as exc:
            raise SettingsError(
                f"AUTHFLOW_LICENSE_PUBLIC_KEYS entry {position + 1} is not a base64 raw 32-byte Ed25519 key"
            ) from exc
    return keys


def public_key_text(private_key_pem: bytes) -> str:
    """The base64 raw public key for AUTHFLOW_LICENSE_PUBLIC_KEYS, from a PKCS8 PEM private key."""
    key = _load_private_key(private_key_pem)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def _load_private_key(pem: bytes) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise InvalidInput("The private key is not an unencrypted PKCS8 PEM key.") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidInput("The private key is not an Ed25519 key.")
    return key


def issue_license(
    private_key_pem: bytes,
    *,
    customer: str = "",
    sku: str = "enterprise",
    features: list[str] | tuple[str, ...] = (),
    days: int = 365,
    users: int | None = None,
    starts_at: int | None = None,
) -> dict:
    """Sign a new license file. Raises InvalidInput for a bad key or values."""
    if days < 1:
        raise InvalidInput("days must be at least 1.")
    if users is not None and users < 0:
        raise InvalidInput("users must not be negative.")
    key = _load_private_key(private_key_pem)
    issued = now_ms()
    start = issued if starts_at is None else starts_at
    doc = {
        "id": new_id(),
        "issued_at": issued,
        "starts_at": start,
        "expires_at": start + days * DAY_MS,
        "customer": customer,
        "sku_short_name": sku,
        "features": {name: True for name in features},
    }
    if users is not None:
        doc["features"]["users"] = users
    payload = json.dumps(doc, sort_keys=True).encode()
    return {
        "payload": base64.b64encode(payload).decode(),
        "signature": base64.b64encode(key.sign(payload)).decode(),
    }


def verify_license_file(raw: bytes | str, *, at_ms: int | None = None) -> dict:
    """The verified document of a license file. Raises InvalidLicense (400) when the file
    is malformed, no configured key verifies it, or `at_ms` (now) is outside its window.
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        container = LicenseFileSchema().load(json.loads(text))
        payload = base64.b64decode(container["payload"], validate=True)
        signature = base64.b64decode(container["signature"], validate=True)
        doc = LicenseDocumentSchema().load(json.loads(payload))
    except (ValueError, UnicodeDecodeError, binascii.Error, ValidationError, TypeError) as exc:
        raise InvalidLicense("The license file is not a valid signed license document.") from exc
    keys = parse_public_keys(current_app.config.get("LICENSE_PUBLIC_KEYS", ""))
    if not any(_verifies(key, signature, payload) for key in keys):
        raise InvalidLicense("The license signature does not verify against a trusted key.")
    now = now_ms() if at_ms is None else at_ms
    if not doc["starts_at"] <= now < doc["expires_at"]:
        raise InvalidLicense("The license is not valid now (not started yet or expired).")
    return doc


def _verifies(key: Ed25519PublicKey, signature: bytes, payload: bytes) -> bool:
    try:
        key.verify(signature, payload)
        return True
    except InvalidSignature:
        return False


def install_license(raw: bytes) -> dict:
    """Verify and install a license file, replacing the current one. Returns the document.

    Raises InvalidLicense. Flushes; the caller commits.
    """
    if len(raw) > MAX_LICENSE_BYTES:
        raise InvalidLicense("The license file is too large.")
    doc = verify_license_file(raw)
    _deactivate()
    db.session.add(LicenseRecord(license_id=doc["id"], document=raw.decode("utf-8"), active=True))
    db.session.flush()
    return doc


def _deactivate() -> None:
    current = db.session.scalar(db.select(LicenseRecord).where(LicenseRecord.active.is_(True)).with_for_update())
    if current is not None:
        current.active = None
        db.session.flush()


def remove_license() -> None:
    """Remove the installed license (kept as history). Removing none is not an error."""
    _deactivate()


def current_license() -> dict | None:
    """The installed license document when it still verifies now, else None."""
    raw = db.session.scalar(db.select(LicenseRecord.document).where(LicenseRecord.active.is_(True)))
    if raw is None:
        return None
    try:
        return verify_license_file(raw)
    except InvalidLicense:
        return None


def has_feature(name: str) -> bool:
    """Whether a valid license is installed and grants feature `name`."""
    doc = current_license()
    return bool(doc and doc["features"].get(name))


def user_limit() -> int:
    """The licensed user count; 0 (unlimited) without a license or without a `users` feature."""
    doc = current_license()
    value = doc["features"].get("users", 0) if doc else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
