"""Operator commands of the admin API."""

from __future__ import annotations

import json

import click
from flask.cli import AppGroup

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


remotecluster_cli = AppGroup("remotecluster", help="Remote clusters (secure connections).")


@remotecluster_cli.command("ping", help="Ping every confirmed remote once; record last_ping_at.")
@click.option("--json", "as_json", is_flag=True)
def remotecluster_ping(as_json):
    from admin_api.remote_cluster_services import ping_all_remotes
    from extensions import db

    results = ping_all_remotes()
    db.session.commit()
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in results]))
    else:
        for r in results:
            click.echo(f"{r.remote_id}  {r.site_url}  {'ok' if r.ok else 'FAILED: ' + r.error}")
    if any(not r.ok for r in results):
        raise SystemExit(1)


COMMANDS.append(remotecluster_cli)
