"""Files in the file store and their public links (SPEC 4.10, 8.16)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import mimetypes
import time
import unicodedata

from admin_api import config_store, file_store
from admin_api.models import FileInfo
from errors import InvalidInput, InvalidParam, NotFound, PayloadTooLarge, PermissionDenied
from extensions import db
from utils import is_id, new_id

MAX_FILES_PER_REQUEST = 10
MAX_NAME_LENGTH = 256
# Shown inline by browsers; everything else is sent as an attachment (SPEC 8.16).
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"})

NOT_FOUND_ID = "app.file_info.get.app_error"
LINKS_DISABLED_ID = "api.file.get_public_link.disabled.app_error"
BAD_HASH_ID = "api.file.get_file.public_invalid.app_error"
TOO_LARGE_ID = "api.file.upload_file.too_large.app_error"


def clean_name(raw: str | None) -> str:
    """The file's base name: no folders, no control characters, 1–256 characters.
    Raises InvalidInput.
    """
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in unicodedata.normalize("NFC", name) if unicodedata.category(ch)[0] != "C").strip()
    if not name or name in (".", ".."):
        raise InvalidInput("Each uploaded file needs a file name.")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidInput(f"A file name may have at most {MAX_NAME_LENGTH} characters.")
    return name


def _mime_type(name: str) -> str:
    # Decided by the name, not by what the client claims: the type decides inline display.
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def upload_files(creator_id: str, uploads: list[tuple[str | None, bytes]], *, channel_id: str = "") -> list[FileInfo]:
    """Store each (file name, bytes) through the configured driver and record it.

    Raises InvalidInput (no files, too many, bad name or channel id), PayloadTooLarge (a
    file over FileSettings.MaxFileSize) or StorageFailure (the backend failed). Flushes;
    the caller commits.
    """
    if not uploads:
        raise InvalidInput("No files were sent (multipart field 'files').")
    if len(uploads) > MAX_FILES_PER_REQUEST:
        raise InvalidInput(f"At most {MAX_FILES_PER_REQUEST} files per request.")
    if channel_id and not is_id(channel_id):
        raise InvalidInput("channel_id is not a valid id.")
    max_size = config_store.get_config()["FileSettings"]["MaxFileSize"]
    infos = []
    for raw_name, data in uploads:
        name = clean_name(raw_name)
        if len(data) > max_size:
            raise PayloadTooLarge(f"{name} is larger than the maximum file size ({max_size} bytes).",
                                  error_id=TOO_LARGE_ID)
        file_id = new_id()
        extension = name.rsplit(".", 1)[1].lower()[:64] if "." in name.strip(".") else ""
        info = FileInfo(
            id=file_id,
            creator_id=creator_id,
            channel_id=channel_id,
            name=name,
            extension=extension,
            size=len(data),
            mime_type=_mime_type(name),
            path=f"files/{time.strftime('%Y%m%d', time.gmtime())}/{file_id}",
        )
        db.session.add(info)
        infos.append((info, data))
    db.session.flush()
    written = []
    try:
        for info, data in infos:
            file_store.write(info.path, data)
            written.append(info.path)
    except Exception:
        # The rows roll back with the request; do not leave their bytes behind either.
        for path in written:
            try:
                file_store.delete(path)
            except Exception:  # best effort: the original error is the one to report
                pass
        raise
    return [info for info, _ in infos]


def get_file(file_id: str) -> FileInfo:
    """A file that is not deleted. Raises InvalidParam (bad id) or NotFound."""
    if not is_id(file_id):
        raise InvalidParam("file_id is not a valid id.")
    info = db.session.get(FileInfo, file_id)
    if info is None or info.delete_at:
        raise NotFound("The file does not exist.", error_id=NOT_FOUND_ID)
    return info


def link_hash(salt: str, file_id: str) -> str:
    """Unpadded URL-safe base64 of SHA-256(PublicLinkSalt + file_id)."""
    digest = hashlib.sha256((salt + file_id).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _file_settings_with_links() -> dict:
    fs = config_store.get_config()["FileSettings"]
    if not fs["EnablePublicLink"] or not fs["PublicLinkSalt"]:
        raise PermissionDenied("Public links have been disabled by the system administrator.",
                               error_id=LINKS_DISABLED_ID)
    return fs


def public_link(file_id: str, *, caller_id: str, may_manage: bool, base_url: str) -> str:
    """`<SiteURL>/files/<id>/public?h=<hash>` for the creator (or an admin).

    Raises PermissionDenied (links off, or someone else's file), InvalidParam, NotFound.
    """
    fs = _file_settings_with_links()
    info = get_file(file_id)
    if info.creator_id != caller_id and not may_manage:
        raise PermissionDenied("Only the file's creator can share a public link to it.")
    return f"{base_url.rstrip('/')}/files/{info.id}/public?h={link_hash(fs['PublicLinkSalt'], info.id)}"


def open_public_file(file_id: str, presented_hash: str | None) -> tuple[FileInfo, bytes]:
    """The file and its bytes for a public link. Raises PermissionDenied (links off),
    InvalidParam (missing or wrong `h`, compared in constant time), NotFound, StorageFailure.
    """
    fs = _file_settings_with_links()
    if not presented_hash:
        raise InvalidParam("The link has no h parameter.", error_id=BAD_HASH_ID)
    expected = link_hash(fs["PublicLinkSalt"], file_id)
    if not hmac.compare_digest(expected.encode(), presented_hash.encode("utf-8", "replace")):
        raise InvalidParam("The link is not valid.", error_id=BAD_HASH_ID)
    try:
        info = get_file(file_id)
    except InvalidParam as exc:  # a valid hash for a malformed id cannot happen; say not found
        raise NotFound("The file does not exist.", error_id=NOT_FOUND_ID) from exc
    return info, file_store.read(info.path)


def is_inline(mime_type: str) -> bool:
    return mime_type in INLINE_TYPES
