"""Remote cluster invite codes (SPEC 5), compatible with Mattermost both ways. Pure crypto.

An invite is the JSON `{remote_id, site_url, token, version}` encrypted with AES-256-GCM;
blob = salt(16) ‖ nonce(12) ‖ ciphertext+tag, URL-safe base64 with padding. Version 3 keys
come from PBKDF2-HMAC-SHA256 (600 000 iterations); older versions used scrypt
(N=32768, r=8, p=1), which decryption still accepts.
"""

from __future__ import annotations

import base64
import binascii
import json
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

INVITE_VERSION = 3
PBKDF2_ITERATIONS = 600_000
SALT_BYTES = 16
NONCE_BYTES = 12
TAG_BYTES = 16
# A real invite is a few hundred bytes; refuse to spend a KDF on megabytes of garbage.
MAX_INVITE_CHARS = 8192


class InviteDecodeError(ValueError):
    """The invite is not URL-safe base64 of a blob long enough to be an invite."""


class InviteDecryptError(ValueError):
    """Wrong password, or not an invite at all."""


def pbkdf2_key(password: str, salt: bytes) -> bytes:
    return PBKDF2HMAC(hashes.SHA256(), 32, salt, PBKDF2_ITERATIONS).derive(password.encode("utf-8"))


def scrypt_key(password: str, salt: bytes) -> bytes:
    return Scrypt(salt, 32, n=32768, r=8, p=1).derive(password.encode("utf-8"))


def encrypt_invite(invite: dict, password: str) -> str:
    """The invite code for `invite` (its `version` decides the KDF; 3 unless given)."""
    invite = {**invite, "version": invite.get("version", INVITE_VERSION)}
    salt = os.urandom(SALT_BYTES)
    nonce = os.urandom(NONCE_BYTES)
    key = pbkdf2_key(password, salt) if invite["version"] >= 3 else scrypt_key(password, salt)
    sealed = AESGCM(key).encrypt(nonce, json.dumps(invite).encode("utf-8"), None)
    return base64.urlsafe_b64encode(salt + nonce + sealed).decode("ascii")


def decode_invite(code: str) -> bytes:
    """The raw blob of an invite code. Raises InviteDecodeError."""
    if not isinstance(code, str) or len(code) > MAX_INVITE_CHARS:
        raise InviteDecodeError("invite is not a base64 string of a sensible length")
    code = code.strip()
    code += "=" * (-len(code) % 4)  # tolerate an invite whose padding was cut off
    try:
        blob = base64.b64decode(code.encode("ascii"), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError, UnicodeError) as exc:
        raise InviteDecodeError("invite is not valid URL-safe base64") from exc
    if len(blob) < SALT_BYTES + NONCE_BYTES + TAG_BYTES + 2:
        raise InviteDecodeError("invite is too short")
    return blob


def decrypt_invite(code: str, password: str) -> dict:
    """The invite inside `code`: PBKDF2 first, then scrypt for older invites.

    Raises InviteDecodeError (not base64) or InviteDecryptError (wrong password, garbage,
    or content that is not an invite object).
    """
    blob = decode_invite(code)
    salt, nonce, sealed = blob[:SALT_BYTES], blob[SALT_BYTES:SALT_BYTES + NONCE_BYTES], blob[SALT_BYTES + NONCE_BYTES:]
    for derive in (pbkdf2_key, scrypt_key):
        try:
            plain = AESGCM(derive(password or "", salt)).decrypt(nonce, sealed, None)
        except InvalidTag:
            continue
        try:
            invite = json.loads(plain)
        except ValueError as exc:
            raise InviteDecryptError("invite content is not JSON") from exc
        if not isinstance(invite, dict):
            raise InviteDecryptError("invite content is not an object")
        return invite
    raise InviteDecryptError("wrong password or not an invite")
