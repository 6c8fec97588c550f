"""SPEC 5 invite codes: compatible with an independent implementation of the format, both ways.

The reference below is written from SPEC 5 alone, with hashlib's KDFs (not the
`cryptography` KDF classes admin_api.invites uses) and `cryptography`'s AES-GCM:
JSON {remote_id, site_url, token, version} → AES-256-GCM; key = PBKDF2-HMAC-SHA256
(600 000 iterations, 16-byte salt) for version 3, scrypt (N=32768, r=8, p=1) before;
blob = salt ‖ 12-byte nonce ‖ ciphertext+tag; URL-safe base64 with padding.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from admin_api import invites
from utils import new_id, new_secret

PASSWORD = "correct horse"


def reference_key(password: str, salt: bytes, version: int) -> bytes:
    if version >= 3:
        return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000, dklen=32)
    return hashlib.scrypt(password.encode(), salt=salt, n=32768, r=8, p=1, dklen=32, maxmem=64 * 1024 * 1024)


def reference_encrypt(invite: dict, password: str) -> str:
    salt, nonce = os.urandom(16), os.urandom(12)
    sealed = AESGCM(reference_key(password, salt, invite["version"])).encrypt(nonce, json.dumps(invite).encode(), None)
    return base64.urlsafe_b64encode(salt + nonce + sealed).decode()


def reference_decrypt(code: str, password: str, version: int) -> dict:
    blob = base64.urlsafe_b64decode(code)
    salt, nonce, sealed = blob[:16], blob[16:28], blob[28:]
    return json.loads(AESGCM(reference_key(password, salt, version)).decrypt(nonce, sealed, None))


def sample(version: int = 3) -> dict:
    return {"remote_id": new_id(), "site_url": "https://a.example.org", "token": new_secret(), "version": version}


def test_reference_v3_invite_decrypts_here():
    invite = sample(3)
    assert invites.decrypt_invite(reference_encrypt(invite, PASSWORD), PASSWORD) == invite


def test_older_scrypt_invite_decrypts_here():
    invite = sample(2)
    assert invites.decrypt_invite(reference_encrypt(invite, PASSWORD), PASSWORD) == invite


def test_our_invite_decrypts_with_the_reference_and_has_the_spec_layout():
    invite = sample(3)
    code = invites.encrypt_invite(invite, PASSWORD)
    assert set(code) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")
    assert len(code) % 4 == 0  # padded
    blob = base64.urlsafe_b64decode(code)
    assert len(blob) == 16 + 12 + len(json.dumps(invite).encode()) + 16
    assert reference_decrypt(code, PASSWORD, 3) == invite
    with pytest.raises(InvalidTag):
        reference_decrypt(code, "other password", 3)


def test_wrong_password_is_a_decrypt_error():
    code = reference_encrypt(sample(3), PASSWORD)
    with pytest.raises(invites.InviteDecryptError):
        invites.decrypt_invite(code, "not the password")


def test_invite_without_padding_still_decodes():
    code = invites.encrypt_invite(sample(3), PASSWORD).rstrip("=")
    assert invites.decode_invite(code)


@pytest.mark.parametrize("code", ["", "@@@@", "QUJD", "A" * 10000, 42])
def test_garbage_is_a_decode_error(code):
    with pytest.raises(invites.InviteDecodeError):
        invites.decode_invite(code)
