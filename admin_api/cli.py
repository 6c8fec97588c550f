"""Operator commands of the admin API."""

from __future__ import annotations

import json
import signal

import click
from flask.cli import AppGroup

from admin_api import config_store, jobs_service, license_services
from admin_api.permissions import table
from errors import AppError
from extensions import db

config_cli = AppGroup("config", help="Show or change the server configuration (SPEC 3.2).")
license_cli = AppGroup("license", help="Sign licenses (SPEC 3.3).")


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


@config_cli.command("show", help="Print the effective configuration (secrets masked).")
@click.argument("field", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the default for the whole object).")
def config_show(field, as_json):
    doc = config_store.masked_config()
    if field:
        section, _, name = field.partition(".")
        if section not in doc or name not in doc[section]:
            raise click.ClickException(f"Unknown configuration field {field!r}.")
        value = doc[section][name]
        click.echo(json.dumps(value) if as_json or not isinstance(value, str) else value)
        return
    click.echo(json.dumps(doc, indent=None if as_json else 2))


@config_cli.command("set", help="Set SECTION.Field to VALUE (read as JSON when it parses).")
@click.argument("field")
@click.argument("value")
def config_set(field, value):
    try:
        saved = config_store.set_value(field, value)
        db.session.commit()
    except AppError as err:
        db.session.rollback()
        raise click.ClickException(err.message) from err
    section, _, name = field.partition(".")
    shown = config_store.mask(saved)[section][name]
    click.echo(f"{field} = {json.dumps(shown)}")


@license_cli.command("issue", help="Sign a license with an Ed25519 private key (PEM, PKCS8).")
@click.option("--private-key", "private_key", required=True, type=click.File("rb"))
@click.option("--customer", default="")
@click.option("--sku", default="enterprise", show_default=True)
@click.option("--feature", "features", multiple=True, help="A feature to grant (repeatable).")
@click.option("--days", default=365, show_default=True, type=int)
@click.option("--users", default=None, type=int, help="Licensed user count.")
@click.option("--output", default=None, type=click.File("w"), help="Write here instead of stdout.")
def license_issue(private_key, customer, sku, features, days, users, output):
    try:
        signed = license_services.issue_license(
            private_key.read(), customer=customer, sku=sku, features=features, days=days, users=users
        )
    except AppError as err:
        raise click.ClickException(err.message) from err
    click.echo(json.dumps(signed), file=output)


@license_cli.command("public-key", help="Print the public key for AUTHFLOW_LICENSE_PUBLIC_KEYS.")
@click.option("--private-key", "private_key", required=True, type=click.File("rb"))
def license_public_key(private_key):
    try:
        click.echo(license_services.public_key_text(private_key.read()))
    except AppError as err:
        raise click.ClickException(err.message) from err


COMMANDS = [roles_cmd, config_cli, license_cli, jobs_cli]


remotecluster_cli = AppGroup("remotecluster", help="Remote clusters (secure connections).")


@remotecluster_cli.command("ping", help="Ping every confirmed remote once; record last_ping_at.")
@click.option("--json", "as_json", is_flag=True)
def remotecluster_ping(as_json):
    from admin_api.remote_cluster_services import ping_all_remotes

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
