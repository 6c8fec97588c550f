"""Import every resource module so its routes join the blueprint."""

from admin_api import config_routes, file_test, files, license, system, users  # noqa: F401
from admin_api.blueprint import bp

public_bp = files.public_bp

__all__ = ["bp", "public_bp"]
