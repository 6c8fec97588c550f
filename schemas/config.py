"""The server configuration object (SPEC 3.2, 8.7, 8.19): sections, fields, types, defaults.

Pure: no database, no request. `config_schema()` validates a full object (every field of
every section required, unknown names rejected); `config_schema(partial=True)` validates a
patch. Types are strict JSON types: `"true"` is not a boolean and `1.5` is not an integer.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from marshmallow import RAISE, Schema, ValidationError, fields

# --- strict JSON fields ------------------------------------------------------------------


class Bool(fields.Field):
    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise ValidationError("Must be true or false.")
        return value


class Int(fields.Field):
    def __init__(self, *, minimum: int = 0, maximum: int = 2**53, **kw):
        super().__init__(**kw)
        self.minimum, self.maximum = minimum, maximum

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError("Must be an integer.")
        if not self.minimum <= value <= self.maximum:
            raise ValidationError(f"Must be between {self.minimum} and {self.maximum}.")
        return value


class Str(fields.Field):
    def __init__(self, *, choices: tuple[str, ...] | None = None, max_length: int = 4096, **kw):
        super().__init__(**kw)
        self.choices, self.max_length = choices, max_length

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str):
            raise ValidationError("Must be a string.")
        if len(value) > self.max_length:
            raise ValidationError(f"Must be at most {self.max_length} characters.")
        if self.choices is not None and value not in self.choices:
            raise ValidationError("Must be one of: " + ", ".join(repr(c) for c in self.choices) + ".")
        return value


def _site_url(value: str) -> None:
    if value == "":
        return
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValidationError("Must be an absolute http(s) URL without query or fragment.")


# --- the sections ------------------------------------------------------------------------
# Each entry: field name -> (marshmallow field, default). Defaults follow Mattermost's,
# except where SPEC decides otherwise (ChannelBookmarks off, 1 MiB payloads).

MS_30_S = 30000

SECTIONS: dict[str, dict[str, tuple[fields.Field, object]]] = {
    "ServiceSettings": {
        "SiteURL": (Str(validate=_site_url, max_length=2048), ""),
        "EnableCustomEmoji": (Bool(), False),
        "EnableOutgoingOAuthConnections": (Bool(), False),
        "EnableCustomGroups": (Bool(), True),
        "MaximumPayloadSizeBytes": (Int(minimum=1024), 1024 * 1024),
        "MaxUserPreferences": (Int(minimum=1), 1000),
        "MaxUserPreferenceValueBytes": (Int(minimum=1), 20000),
    },
    "TeamSettings": {
        "EnableOpenServer": (Bool(), False),
        "RestrictCreationToDomains": (Str(), ""),
    },
    "FileSettings": {
        # Not restricted to the known drivers here: the connection test answers an
        # unknown driver with its own id (SPEC 6.4); saving one is refused by the service.
        "DriverName": (Str(max_length=64), "local"),
        "Directory": (Str(), "./data/"),
        "EnablePublicLink": (Bool(), False),
        "PublicLinkSalt": (Str(max_length=256), ""),
        "MaxFileSize": (Int(minimum=1), 104857600),
        "AmazonS3AccessKeyId": (Str(), ""),
        "AmazonS3SecretAccessKey": (Str(), ""),
        "AmazonS3Bucket": (Str(), ""),
        "AmazonS3PathPrefix": (Str(), ""),
        "AmazonS3Region": (Str(), ""),
        "AmazonS3Endpoint": (Str(), "s3.amazonaws.com"),
        "AmazonS3SSL": (Bool(), True),
        "AmazonS3SignV2": (Bool(), False),
        "AmazonS3SSE": (Bool(), False),
        "AmazonS3Trace": (Bool(), False),
        "AmazonS3RequestTimeoutMilliseconds": (Int(minimum=1, maximum=3_600_000), MS_30_S),
        "AzureStorageAccount": (Str(), ""),
        "AzureAccessKey": (Str(), ""),
        "AzureContainer": (Str(), ""),
        "AzurePathPrefix": (Str(), ""),
        "AzureEndpoint": (Str(), ""),
        "AzureRequestTimeoutMilliseconds": (Int(minimum=1, maximum=3_600_000), MS_30_S),
    },
    "LogSettings": {
        "EnableFile": (Bool(), False),
        # "" means <instance folder>/logs.
        "FileLocation": (Str(), ""),
        "FileLevel": (Str(choices=("DEBUG", "INFO", "WARN", "ERROR")), "INFO"),
    },
    "RateLimitSettings": {
        "Enable": (Bool(), False),
        "PerSec": (Int(minimum=1), 10),
        "MaxBurst": (Int(minimum=1), 100),
    },
    "IPFilteringSettings": {
        "Enable": (Bool(), False),
    },
    "LdapSettings": {
        "Enable": (Bool(), False),
        "EnableSync": (Bool(), False),
        "LdapServer": (Str(), ""),
        "LdapPort": (Int(minimum=1, maximum=65535), 389),
        "ConnectionSecurity": (Str(choices=("", "TLS", "STARTTLS")), ""),
        "BaseDN": (Str(), ""),
        "BindUsername": (Str(), ""),
        "BindPassword": (Str(), ""),
        "UserFilter": (Str(), ""),
        "GroupFilter": (Str(), ""),
        "IdAttribute": (Str(), ""),
        "UsernameAttribute": (Str(), ""),
        "EmailAttribute": (Str(), ""),
        "GroupIdAttribute": (Str(), ""),
        "GroupDisplayNameAttribute": (Str(), ""),
    },
    "ConnectedWorkspacesSettings": {
        "EnableRemoteClusterService": (Bool(), True),
    },
    "FeatureFlags": {
        "ChannelBookmarks": (Bool(), False),
    },
}


def defaults() -> dict:
    """A fresh copy of the default configuration object."""
    return {section: {name: default for name, (_, default) in spec.items()} for section, spec in SECTIONS.items()}


def field_names() -> list[str]:
    """Every field as `Section.Field`."""
    return [f"{section}.{name}" for section, spec in SECTIONS.items() for name in spec]


def _section_schema(section: str, spec: dict) -> type[Schema]:
    attrs = {name: _copy_field(field) for name, (field, _) in spec.items()}
    attrs["Meta"] = type("Meta", (), {"unknown": RAISE})
    return type(f"{section}Schema", (Schema,), attrs)


def _copy_field(field: fields.Field) -> fields.Field:
    import copy

    clone = copy.copy(field)
    clone.required = True
    return clone


class _ConfigSchema(Schema):
    class Meta:
        unknown = RAISE


ConfigSchema = type(
    "ConfigSchema",
    (_ConfigSchema,),
    {
        section: fields.Nested(_section_schema(section, spec), required=True)
        for section, spec in SECTIONS.items()
    },
)


def config_schema(*, partial: bool = False) -> Schema:
    """Full object (every field required) or, with partial=True, a patch of any fields."""
    return ConfigSchema(partial=partial)


def validate_field(section: str, name: str, value: object) -> object:
    """Check one value against its field (environment overrides, the CLI). Raises ValidationError."""
    field = SECTIONS[section][name][0]
    return field.deserialize(value)


def file_settings_schema() -> Schema:
    """The FileSettings section alone (the connection test validates only that section)."""
    return _section_schema("FileSettings", SECTIONS["FileSettings"])()
