"""User password hashing with Argon2id (argon2-cffi); never stored or logged in clear."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()
# A hash of a random password, verified when the user does not exist, so a failed login
# takes the same time whether or not the username is known.
_DUMMY_HASH = _hasher.hash("authflow-timing-equaliser")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(stored_hash or _DUMMY_HASH, password) and bool(stored_hash)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    return _hasher.check_needs_rehash(stored_hash)
