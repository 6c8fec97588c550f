"""The administrative REST API under /api/v4 (Mattermost's API v4 shapes)."""
