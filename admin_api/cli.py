"""Operator commands of the admin API."""

from __future__ import annotations

import json

import click
from flask.cli import AppGroup

from admin_api import config_store
from admin_api.permissions import table
from errors import AppError
from extensions import db

config_cli = AppGroup("config", help="Show or change the server configuration (SPEC 3.2).")


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


COMMANDS = [roles_cmd, config_cli]
