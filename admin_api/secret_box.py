"""Secrets we must send in clear later (a remote's token, SPEC 5) are stored encrypted.

AES-256-GCM under a key derived from SECRET_KEY with HKDF-SHA256; each use gets its own
`purpose` (HKDF info) so one key never serves two kinds of secret, and callers bind the
ciphertext to its row with `context` (associated data) so a sealed value copied into another
row does not open. Changing SECRET_KEY makes sealed values unreadable (they then fail closed).
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app

_VERSION = b"\x01"


class SealedSecretError(ValueError):
    """A sealed value that does not open (wrong key, wrong row, or tampered)."""


def _key(purpose: str) -> bytes:
    secret = current_app.config["SECRET_KEY"].encode("utf-8")
    return HKDF(hashes.SHA256(), 32, salt=b"authflow secret box", info=purpose.encode()).derive(secret)


def seal(value: str, *, purpose: str, context: str = "") -> str:
    """Encrypt `value`; the result is ASCII text safe to store."""
    nonce = os.urandom(12)
    sealed = AESGCM(_key(purpose)).encrypt(nonce, value.encode("utf-8"), context.encode())
    return base64.urlsafe_b64encode(_VERSION + nonce + sealed).decode("ascii")


def unseal(blob: str, *, purpose: str, context: str = "") -> str:
    """Decrypt what `seal` produced. Raises SealedSecretError."""
    try:
        raw = base64.urlsafe_b64decode(blob.encode("ascii"))
        if raw[:1] != _VERSION or len(raw) < 1 + 12 + 16:
            raise SealedSecretError("unknown sealed format")
        plain = AESGCM(_key(purpose)).decrypt(raw[1:13], raw[13:], context.encode())
        return plain.decode("utf-8")
    except (InvalidTag, ValueError, UnicodeError) as exc:
        raise SealedSecretError("sealed value does not open") from exc
