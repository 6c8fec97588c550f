"""Roles and the permissions they grant: the one table (`flask --app app roles` prints it)."""

from __future__ import annotations

# What an ordinary signed-in user may do with its own data.
_USER = frozenset(
    {
        "create_team",
        "create_public_channel",
        "create_private_channel",
        "create_custom_group",
        "manage_custom_group_members",
        "delete_custom_group",
        "restore_custom_group",
        "add_bookmark_public_channel",
        "edit_bookmark_public_channel",
        "order_bookmark_public_channel",
        "delete_bookmark_public_channel",
        "add_bookmark_private_channel",
        "edit_bookmark_private_channel",
        "order_bookmark_private_channel",
        "delete_bookmark_private_channel",
        "create_emojis",
        "create_post",
        "upload_file",
        "list_users",
    }
)

# What only admins (or user managers, below) hold. system_admin holds every permission.
_ADMIN_ONLY = frozenset(
    {
        "manage_system",
        "manage_secure_connections",
        "manage_shared_channels",
        "manage_oauth",
        "manage_outgoing_oauth_connections",
        "sysconsole_write_environment_file_storage",
        "sysconsole_read_environment_file_storage",
        "sysconsole_read_user_management_users",
        "sysconsole_write_user_management_users",
        "sysconsole_read_user_management_groups",
        "sysconsole_write_user_management_groups",
        "sysconsole_read_ip_filters",
        "sysconsole_write_ip_filters",
        "manage_jobs",
        "read_jobs",
        "download_compliance_export_result",
        "manage_team",
        "add_user_to_team",
        "manage_public_channel_members",
        "manage_private_channel_members",
        "edit_other_users",
    }
)
ALL_PERMISSIONS: frozenset[str] = _USER | _ADMIN_ONLY

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "system_admin": ALL_PERMISSIONS,
    "system_user_manager": _USER
    | {
        "sysconsole_read_user_management_users",
        "sysconsole_write_user_management_users",
        "sysconsole_read_user_management_groups",
        "sysconsole_write_user_management_groups",
        "read_jobs",
        "manage_team",
        "add_user_to_team",
        "manage_public_channel_members",
        "manage_private_channel_members",
        "edit_other_users",
    },
    "system_user": _USER,
}


def permissions_for(roles: list[str]) -> frozenset[str]:
    granted: set[str] = set()
    for role in roles:
        granted |= ROLE_PERMISSIONS.get(role, frozenset())
    return frozenset(granted)


def table() -> list[tuple[str, list[str]]]:
    return [(role, sorted(perms)) for role, perms in ROLE_PERMISSIONS.items()]
