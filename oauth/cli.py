"""Operator commands: users, personal access tokens, clients, housekeeping (SPEC 2.1, 2.2, 2.8)."""

from __future__ import annotations

import json

import click
from flask import current_app
from flask.cli import AppGroup

from errors import AppError
from extensions import db
from oauth import services
from schemas.client import ClientSchema
from schemas.user import UserSchema
from utils import new_secret

users_cli = AppGroup("users", help="Manage users.")
tokens_cli = AppGroup("tokens", help="Manage personal access tokens.")
clients_cli = AppGroup("clients", help="Manage OAuth clients.")
oauth_cli = AppGroup("oauth", help="OAuth housekeeping.")


def _emit(as_json: bool, data: dict, text: str) -> None:
    click.echo(json.dumps(data) if as_json else text)


def _run(fn):
    """Commit on success; print an AppError as a one-line message and exit 1."""
    try:
        result = fn()
        db.session.commit()
        return result
    except AppError as err:
        db.session.rollback()
        raise click.ClickException(err.message) from err


@users_cli.command("create")
@click.option("--username", required=True)
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--admin", is_flag=True, help="Give the user the system_admin role.")
@click.option("--json", "as_json", is_flag=True)
def users_create(username, email, password, admin, as_json):
    roles = "system_user system_admin" if admin else "system_user"
    user = _run(lambda: services.create_user(username, email, password, roles=roles))
    _emit(as_json, UserSchema().dump(user), f"created user {user.username} ({user.id})")


@users_cli.command("bootstrap-admin")
@click.option("--username", default="admin", show_default=True)
@click.option("--email", default="admin@localhost.localdomain", show_default=True)
def users_bootstrap_admin(username, email):
    """Create the first admin with a random password, printed once; nothing if users exist."""
    if services.list_users():
        click.echo("users exist already; no admin created")
        return
    password = new_secret(18)
    _run(lambda: services.create_user(username, email, password, roles="system_user system_admin"))
    click.echo(f"first admin created: username {username!r}, password {password!r} (shown once)")


@users_cli.command("list")
@click.option("--json", "as_json", is_flag=True)
def users_list(as_json):
    rows = UserSchema(many=True).dump(services.list_users())
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        state = "active" if row["delete_at"] == 0 else "deactivated"
        click.echo(f"{row['id']}  {row['username']:<24} {row['email']:<32} {row['roles']}  {state}")


@users_cli.command("set-password")
@click.argument("username")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True)
def users_set_password(username, password):
    _run(lambda: services.set_password(services.require_user(username), password))
    click.echo(f"password changed for {username}")


@users_cli.command("deactivate")
@click.argument("username")
def users_deactivate(username):
    _run(lambda: services.deactivate_user(services.require_user(username)))
    click.echo(f"deactivated {username}; its tokens are revoked")


@tokens_cli.command("create")
@click.option("--username", required=True)
@click.option("--description", default="")
@click.option("--json", "as_json", is_flag=True)
def tokens_create(username, description, as_json):
    row, raw = _run(lambda: services.create_personal_token(services.require_user(username), description))
    _emit(
        as_json,
        {"id": row.id, "token": raw, "user_id": row.user_id, "description": row.description},
        f"token id: {row.id}\ntoken:    {raw}\n(shown once; keep it secret)",
    )


@tokens_cli.command("revoke")
@click.argument("token_id")
def tokens_revoke(token_id):
    _run(lambda: services.revoke_personal_token(token_id))
    click.echo(f"revoked {token_id}")


@clients_cli.command("create")
@click.option("--name", required=True)
@click.option("--redirect-uri", "redirect_uris", multiple=True, required=True)
@click.option("--public", is_flag=True, help="A public client (no secret; PKCE required).")
@click.option("--trusted", is_flag=True, help="Skip the consent page for this client.")
@click.option("--grant-type", "grant_types", multiple=True,
              type=click.Choice(services.KNOWN_GRANT_TYPES))
@click.option("--json", "as_json", is_flag=True)
def clients_create(name, redirect_uris, public, trusted, grant_types, as_json):
    client, secret = _run(
        lambda: services.create_client(
            name, list(redirect_uris), confidential=not public, trusted=trusted,
            grant_types=list(grant_types) or None,
            allow_http=current_app.config["ALLOW_HTTP_REDIRECTS"],
        )
    )
    data = ClientSchema().dump(client)
    data["client_secret"] = secret
    text = f"client_id:     {client.client_id}"
    if secret:
        text += f"\nclient_secret: {secret}\n(shown once; keep it secret)"
    _emit(as_json, data, text)


@clients_cli.command("list")
@click.option("--json", "as_json", is_flag=True)
def clients_list(as_json):
    rows = ClientSchema(many=True).dump(services.list_clients())
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        kind = "confidential" if row["confidential"] else "public"
        click.echo(f"{row['client_id']}  {row['name']:<24} {kind:<12} {' '.join(row['redirect_uris'])}")


@clients_cli.command("delete")
@click.argument("client_id")
def clients_delete(client_id):
    _run(lambda: services.delete_client(services.get_client(client_id)))
    click.echo(f"deleted {client_id} with its codes and tokens")


@clients_cli.command("rotate-secret")
@click.argument("client_id")
@click.option("--json", "as_json", is_flag=True)
def clients_rotate_secret(client_id, as_json):
    secret = _run(lambda: services.rotate_client_secret(services.get_client(client_id)))
    _emit(as_json, {"client_id": client_id, "client_secret": secret},
          f"client_secret: {secret}\n(shown once; the old secret no longer works)")


@oauth_cli.command("cleanup")
@click.option("--batch-size", default=5000, show_default=True)
def oauth_cleanup(batch_size):
    counts = services.cleanup_expired(batch_size)
    db.session.commit()
    click.echo(json.dumps(counts))


COMMANDS = [users_cli, tokens_cli, clients_cli, oauth_cli]
