"""Small pure helpers shared by every package: ids, times, token hashing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

# Mattermost's base32 alphabet, so our ids are interchangeable with Mattermost's (SPEC 8.17).
_ID_ALPHABET = "ybndrfg8ejkmcpqxot1uwisza345h769"
_STD_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_TRANSLATE = str.maketrans(_STD_ALPHABET, _ID_ALPHABET)


def new_id() -> str:
    """A 26-character lowercase id: 128 random bits in Mattermost's base32 alphabet."""
    raw = base64.b32encode(secrets.token_bytes(16)).decode("ascii").rstrip("=")
    return raw.translate(_TRANSLATE)


def is_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) == 26
        and all(ch in _ID_ALPHABET for ch in value)
    )


def now_ms() -> int:
    """Milliseconds since the Unix epoch (admin JSON times, SPEC 1.1)."""
    return int(time.time() * 1000)


def new_secret(nbytes: int = 32) -> str:
    """A URL-safe random string; 32 bytes give 43 characters (256 bits)."""
    return secrets.token_urlsafe(nbytes)


def hash_secret(value: str) -> str:
    """SHA-256 hex digest: how codes, tokens and client secrets are stored and looked up.

    The inputs are high-entropy random strings, so a fast hash is enough and keeps the token
    endpoint fast; user passwords use a slow KDF instead (oauth.passwords).
    """
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def secret_matches(value: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented secret with its stored hash."""
    return hmac.compare_digest(hash_secret(value), stored_hash or "")
