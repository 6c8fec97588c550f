"""marshmallow schemas, split by direction; pure (no database, no request)."""
