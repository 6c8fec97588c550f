"""The server configuration (SPEC 3.2, 8.7, 8.8, 8.19, 8.20): stored, validated, effective.

The effective configuration is, field by field: the environment override
`AUTHFLOW_<SECTION>_<FIELD>` when set, else the current stored row, else the default
(`ServiceSettings.SiteURL` defaults to AUTHFLOW_BASE_URL, which is how it is seeded on first
start). Every worker sees a change on its next request: each process caches the decoded
object keyed by the id of the current row and checks that id (one indexed query) at most
once per request, so nothing that matters lives only in one process.

Secrets are encrypted at rest with a key derived from SECRET_KEY (secret_box: HKDF → AES-256-GCM) and are
shown as PLACEHOLDER; SECRET_FIELDS is the one list both directions use.

Public API:
    get_config() -> dict            effective, unmasked, a private copy
    site_url() -> str
    masked_config() -> dict         for GET /api/v4/config and support packets
    mask(doc) / unmask(doc, running)
    save_config(full, actor=...)    PUT semantics      (flushes; the caller commits)
    patch_config(partial, actor=...) PATCH semantics    (flushes; the caller commits)
    set_value("Section.Field", raw) the CLI's `config set`
    environment_overrides(environ)  raises settings.SettingsError for a bad variable
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
import time
from dataclasses import dataclass

from flask import current_app, g, has_request_context
from marshmallow import ValidationError

from admin_api import secret_box
from admin_api.models import ConfigRecord
from errors import InvalidInput, describe_validation_error
from extensions import db
from schemas.config import SECTIONS, config_schema, defaults, validate_field
from settings import SettingsError
from utils import new_secret

log = logging.getLogger("authflow")

PLACEHOLDER = "*" * 32

# The one list of secret fields (SPEC 8.7): masking, unmasking, encryption at rest and log
# redaction all read it. A secret field added later joins this list in the same commit.
SECRET_FIELDS: tuple[tuple[str, str], ...] = (
    ("FileSettings", "AmazonS3SecretAccessKey"),
    ("FileSettings", "AzureAccessKey"),
    ("FileSettings", "PublicLinkSalt"),
    ("LdapSettings", "BindPassword"),
)

DRIVER_NAMES = ("local", "amazons3", "azureblob")
ENV_PREFIX = "AUTHFLOW_"
_ENCRYPTED_PREFIX = "fernet:"


# --- environment overrides ---------------------------------------------------------------


def _env_names() -> dict[str, tuple[str, str]]:
    return {
        f"{ENV_PREFIX}{section.upper()}_{name.upper()}": (section, name)
        for section, spec in SECTIONS.items()
        for name in spec
    }


_ENV_NAMES = _env_names()


def environment_overrides(environ: dict | os._Environ | None = None) -> dict[str, dict]:
    """{section: {field: value}} from AUTHFLOW_<SECTION>_<FIELD> variables (SPEC 8.20).

    A value is read as JSON when it parses, else as the plain string. Raises SettingsError
    naming the variable when the value does not fit its field.
    """
    environ = os.environ if environ is None else environ
    out: dict[str, dict] = {}
    for var, raw in environ.items():
        if not var.startswith(ENV_PREFIX) or var not in _ENV_NAMES:
            continue
        section, name = _ENV_NAMES[var]
        value = _read_raw(section, name, raw)
        try:
            value = validate_field(section, name, value)
        except ValidationError as exc:
            raise SettingsError(f"{var}: {' '.join(map(str, exc.messages))} (got {raw!r})") from exc
        out.setdefault(section, {})[name] = value
    return out


def check_environment() -> None:
    """Called by create_app: a bad override stops the server at start (SPEC 8.20)."""
    environment_overrides()


# --- secrets -------------------------------------------------------------------------------


_SECRET_PURPOSE = "config secrets"


def _encrypt_secrets(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    for section, name in SECRET_FIELDS:
        value = out.get(section, {}).get(name)
        if value:
            sealed = secret_box.seal(value, purpose=_SECRET_PURPOSE, context=f"{section}.{name}")
            out[section][name] = _ENCRYPTED_PREFIX + sealed
    return out


def _decrypt_secrets(doc: dict) -> dict:
    for section, name in SECRET_FIELDS:
        value = doc.get(section, {}).get(name)
        if isinstance(value, str) and value.startswith(_ENCRYPTED_PREFIX):
            try:
                doc[section][name] = secret_box.unseal(
                    value[len(_ENCRYPTED_PREFIX):], purpose=_SECRET_PURPOSE, context=f"{section}.{name}"
                )
            except secret_box.SealedSecretError:
                # SECRET_KEY changed: the secret is lost, not the whole configuration.
                log.warning("stored secret %s.%s cannot be decrypted; treated as unset", section, name)
                doc[section][name] = ""
    return doc


def mask(doc: dict) -> dict:
    """A copy with every non-empty secret replaced by PLACEHOLDER."""
    out = copy.deepcopy(doc)
    for section, name in SECRET_FIELDS:
        if out.get(section, {}).get(name):
            out[section][name] = PLACEHOLDER
    return out


def unmask(doc: dict, running: dict) -> dict:
    """A copy where each secret equal to PLACEHOLDER takes the running value, when there is one.

    With no running value the placeholder stays (SPEC 6.5: the backend then refuses it).
    """
    out = copy.deepcopy(doc)
    for section, name in SECRET_FIELDS:
        sec = out.get(section)
        if isinstance(sec, dict) and sec.get(name) == PLACEHOLDER:
            current = running.get(section, {}).get(name)
            if current:
                sec[name] = current
    return out


def secret_values(doc: dict) -> list[str]:
    """The secret strings of `doc` (for log redaction)."""
    return [v for s, n in SECRET_FIELDS if (v := doc.get(s, {}).get(n)) and isinstance(v, str)]


# --- reading -------------------------------------------------------------------------------


@dataclass
class _Loaded:
    version: str | None
    stored: dict  # decoded stored object merged over defaults (secrets in clear)
    effective: dict  # `stored` with the environment's overrides: what the server runs with


_lock = threading.Lock()
# How long a process trusts the current row's id before asking the database again. Other
# workers see a change within this time (SPEC 8.8 allows 5 s); this one sees its own at once.
VERSION_TTL_SECONDS = 1.0


def _cache() -> dict:
    return current_app.extensions.setdefault("authflow_config_cache", {})


def _current_version() -> str | None:
    """The current row's id, asked of the database at most once per VERSION_TTL_SECONDS."""
    cache = _cache()
    now = time.monotonic()
    with _lock:
        checked = cache.get("version_checked")
    if checked is not None and now - checked[0] < VERSION_TTL_SECONDS:
        return checked[1]
    version = db.session.scalar(db.select(ConfigRecord.id).where(ConfigRecord.active.is_(True)))
    with _lock:
        cache["version_checked"] = (now, version)
    return version


def _forget_version() -> None:
    with _lock:
        _cache().pop("version_checked", None)


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for section, values in over.items():
        if section in out and isinstance(values, dict):
            for name, value in values.items():
                if name in out[section]:
                    out[section][name] = value
    return out


def _base_defaults() -> dict:
    doc = defaults()
    doc["ServiceSettings"]["SiteURL"] = current_app.config.get("AUTHFLOW_BASE_URL", "") or ""
    return doc


def _load_stored() -> _Loaded:
    """The stored object over the defaults; cached per process by the current row's id."""
    memo = g.get("_authflow_config") if has_request_context() else None
    if memo is not None:
        return memo
    version = _current_version()
    cache = _cache()
    with _lock:
        hit = cache.get("loaded")
    if hit is None or hit.version != version:
        if version is None:
            stored = _base_defaults()
        else:
            row = db.session.get(ConfigRecord, version)
            stored = _merge(_base_defaults(), _decrypt_secrets(json.loads(row.value)))
        hit = _Loaded(version, stored, _merge(stored, environment_overrides()))
        with _lock:
            cache["loaded"] = hit
    if has_request_context():
        g._authflow_config = hit
    return hit


def _forget_request_memo() -> None:
    if has_request_context():
        g.pop("_authflow_config", None)


def get_config() -> dict:
    """The effective configuration: defaults < stored row < environment. Unmasked; a copy."""
    return copy.deepcopy(_load_stored().effective)


def get_value(section: str, name: str):
    """One effective value, without copying the whole object (for per-request checks)."""
    return _load_stored().effective[section][name]


def site_url() -> str:
    """ServiceSettings.SiteURL without a trailing slash ("" until one is known)."""
    return get_config()["ServiceSettings"]["SiteURL"].rstrip("/")


def masked_config() -> dict:
    """The effective configuration with secrets masked (API output, support packets)."""
    return mask(get_config())


def history(limit: int = 20) -> list[ConfigRecord]:
    """The most recent saved configurations, newest first (values stay encrypted)."""
    return list(
        db.session.scalars(db.select(ConfigRecord).order_by(ConfigRecord.create_at.desc()).limit(limit))
    )


# --- writing -------------------------------------------------------------------------------


def _validate(doc: object, *, partial: bool) -> dict:
    if not isinstance(doc, dict):
        raise InvalidInput("The configuration must be a JSON object.")
    try:
        return config_schema(partial=partial).load(doc)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc)) from exc


def _lock_current() -> ConfigRecord | None:
    """The current row, locked for the rest of the transaction (PostgreSQL; SQLite's
    BEGIN IMMEDIATE already serialises writers). A concurrent save that won the race turns
    our locked row into history, so read again to get the new current one.
    """
    for _ in range(3):
        row = db.session.scalar(
            db.select(ConfigRecord).where(ConfigRecord.active.is_(True)).with_for_update()
        )
        if row is not None and row.active:
            return row
        if row is None and db.session.scalar(db.select(ConfigRecord.id).limit(1)) is None:
            return None
        db.session.expire_all()
    return None


def _apply(changes: dict, *, actor: str) -> dict:
    """Validate `changes` (full object or patch), resolve placeholders and overrides, save."""
    current_row = _lock_current()
    if current_row is None:
        stored = _base_defaults()
    else:
        stored = _merge(_base_defaults(), _decrypt_secrets(json.loads(current_row.value)))
    overrides = environment_overrides()
    effective = _merge(stored, overrides)

    changes = unmask(changes, stored)
    # A placeholder with nothing stored behind it means "unchanged" (still empty).
    for section, name in SECRET_FIELDS:
        if changes.get(section, {}).get(name) == PLACEHOLDER:
            changes[section][name] = stored[section][name]

    refused = [
        f"{section}.{name}"
        for section, values in overrides.items()
        for name, value in values.items()
        if name in changes.get(section, {}) and changes[section][name] != effective[section][name]
    ]
    if refused:
        raise InvalidInput(
            "Set by environment variable, cannot be changed here: " + ", ".join(sorted(refused)) + "."
        )
    # Fields set by the environment keep their stored value underneath.
    for section, values in overrides.items():
        for name in values:
            if name in changes.get(section, {}):
                changes[section][name] = stored[section][name]

    new = _merge(stored, changes)
    _check_rules(new, stored, effective_new=_merge(new, overrides))

    record = ConfigRecord(value=json.dumps(_encrypt_secrets(new), sort_keys=True), active=True, created_by=actor)
    if current_row is not None:
        current_row.active = None
        db.session.flush()
    db.session.add(record)
    db.session.flush()
    _forget_request_memo()
    _forget_version()  # this process reads its own change on its next request
    return _merge(new, overrides)


def _check_rules(new: dict, stored: dict, *, effective_new: dict) -> None:
    """Rules across fields that a per-field schema cannot say."""
    problems = []
    if stored["ServiceSettings"]["SiteURL"] and not new["ServiceSettings"]["SiteURL"]:
        problems.append("ServiceSettings.SiteURL cannot be cleared once set")
    if new["FileSettings"]["DriverName"] not in DRIVER_NAMES:
        problems.append("FileSettings.DriverName must be one of " + ", ".join(DRIVER_NAMES))
    if problems:
        raise InvalidInput("Invalid configuration: " + "; ".join(problems) + ".")
    # Public links are signed with the salt: never let them be on with an empty one.
    if effective_new["FileSettings"]["EnablePublicLink"] and not new["FileSettings"]["PublicLinkSalt"]:
        new["FileSettings"]["PublicLinkSalt"] = new_secret(24)


def save_config(full: object, *, actor: str = "") -> dict:
    """Replace the configuration with a full object (PUT). Returns the effective object.

    Raises InvalidInput naming missing, unknown or invalid fields, a change to a field set
    by the environment, or clearing SiteURL. Flushes; the caller commits.
    """
    return _apply(_validate(full, partial=False), actor=actor)


def patch_config(partial: object, *, actor: str = "") -> dict:
    """Change only the fields `partial` names (PATCH). Same rules and errors as save_config."""
    return _apply(_validate(partial, partial=True), actor=actor)


def parse_cli_value(path: str, raw: str) -> dict:
    """`Section.Field` and a command-line value → a one-field patch (JSON when it parses)."""
    section, _, name = path.partition(".")
    if section not in SECTIONS or name not in SECTIONS[section]:
        raise InvalidInput(f"Unknown configuration field {path!r}.")
    return {section: {name: _read_raw(section, name, raw)}}


def _read_raw(section: str, name: str, raw: str):
    """A value typed by an operator: JSON when it parses, except that a string field takes
    the text as written ("007" parses as JSON 7)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(SECTIONS[section][name][1], str) and not isinstance(value, str):
        return raw
    return value


def set_value(path: str, raw: str, *, actor: str = "cli") -> dict:
    """The CLI's `config set Section.Field VALUE`. Raises InvalidInput like patch_config."""
    return patch_config(parse_cli_value(path, raw), actor=actor)
