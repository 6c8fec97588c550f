"""Import every resource module so its routes join the blueprint."""

from admin_api import config_routes, file_test, jobs, license, oauth_apps, remote_clusters, teams, users  # noqa: F401
from admin_api.blueprint import bp

__all__ = ["bp"]
