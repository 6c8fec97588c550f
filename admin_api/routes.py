"""Import every resource module so its routes join the blueprint."""

from admin_api import users  # noqa: F401
from admin_api import teams  # noqa: F401
from admin_api import remote_clusters  # noqa: F401
from admin_api.blueprint import bp

__all__ = ["bp"]
