"""Operator commands of the admin API."""

from __future__ import annotations

import json

import click

from admin_api.permissions import table


@click.command("roles", help="Print the role → permission table.")
@click.option("--json", "as_json", is_flag=True)
def roles_cmd(as_json):
    rows = table()
    if as_json:
        click.echo(json.dumps(dict(rows)))
        return
    for role, perms in rows:
        click.echo(f"{role}:")
        for perm in perms:
            click.echo(f"  {perm}")


COMMANDS = [roles_cmd]
