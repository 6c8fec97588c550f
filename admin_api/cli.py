"""Operator commands of the admin API."""

from __future__ import annotations

import json

import signal

import click
from flask.cli import AppGroup

from admin_api import jobs_service

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


jobs_cli = AppGroup("jobs", help="Background jobs.")


@jobs_cli.command("run")
@click.option("--once", is_flag=True, help="Run what is pending (and due), then exit.")
@click.option("--interval", default=5.0, show_default=True, help="Seconds to wait when idle.")
def jobs_run(once, interval):
    """A job runner: several may run on several hosts; each job runs once."""
    if once:
        jobs_service.schedule_periodic()
        click.echo(json.dumps({"ran": jobs_service.drain()}))
        return
    stopping = {"now": False}

    def stop(*_):
        stopping["now"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    jobs_service.run_forever(interval, stop=lambda: stopping["now"])


COMMANDS = [roles_cmd, jobs_cli]
