"""The license document (SPEC 3.3, 8.9) and its client view. Pure."""

from __future__ import annotations

from marshmallow import INCLUDE, RAISE, Schema, ValidationError, fields, validate


class _Feature(fields.Field):
    """A feature value: true/false, or a non-negative integer (e.g. `users`)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or (isinstance(value, int) and value >= 0):
            return value
        raise ValidationError("A feature is true, false or a non-negative integer.")


class LicenseFileSchema(Schema):
    class Meta:
        unknown = RAISE

    payload = fields.String(required=True, validate=validate.Length(1, 32768))
    signature = fields.String(required=True, validate=validate.Length(1, 256))


class LicenseDocumentSchema(Schema):
    class Meta:
        unknown = INCLUDE  # newer issuers may add fields; they are signed, so harmless

    id = fields.String(required=True, validate=validate.Length(1, 64))
    issued_at = fields.Integer(required=True, strict=True)
    starts_at = fields.Integer(required=True, strict=True)
    expires_at = fields.Integer(required=True, strict=True)
    customer = fields.Raw(required=True)
    sku_short_name = fields.String(required=True, validate=validate.Length(0, 64))
    features = fields.Dict(keys=fields.String(validate=validate.Length(1, 64)), values=_Feature(), required=True)


def client_view(doc: dict | None) -> dict:
    """Mattermost's client license: every value a string; {"IsLicensed": "false"} without one."""
    if doc is None:
        return {"IsLicensed": "false"}
    customer = doc.get("customer")
    name = customer.get("name", "") if isinstance(customer, dict) else str(customer or "")
    view = {
        "IsLicensed": "true",
        "Id": doc["id"],
        "SkuShortName": doc["sku_short_name"],
        "Customer": name,
        "IssuedAt": str(doc["issued_at"]),
        "StartsAt": str(doc["starts_at"]),
        "ExpiresAt": str(doc["expires_at"]),
        "Users": str(doc["features"].get("users", 0)),
    }
    for key, value in sorted(doc["features"].items()):
        if key != "users":
            view[key] = "true" if value is True else "false" if value is False else str(value)
    return view
