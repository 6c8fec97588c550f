"""Import every resource module so its routes join the blueprint."""

from admin_api import (  # noqa: F401
    config_routes,
    file_test,
    files,
    jobs,
    license,
    oauth_apps,
    openapi,
    remote_clusters,
    system,
    teams,
    users,
)
from admin_api.blueprint import bp

public_bp = files.public_bp

__all__ = ["bp", "public_bp"]
