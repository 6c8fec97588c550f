"""/api/v4/oauth/apps: OAuth client administration (SPEC 2.1), permission manage_oauth."""

from __future__ import annotations

from flask import current_app, jsonify

from admin_api.auth import current_caller, requires
from admin_api.blueprint import bp
from admin_api.http import load_body, paging
from admin_api.openapi import PAGING, documented
from errors import InvalidInput
from extensions import db
from oauth import services
from schemas.common import StatusOKSchema
from schemas.oauth_app import OAuthAppInSchema, OAuthAppOutSchema, OAuthAppUpdateSchema


def _out(client, secret: str | None = None):
    return OAuthAppOutSchema(secret=secret).dump(client)


@bp.post("/oauth/apps")
@documented(body=OAuthAppInSchema, response=OAuthAppOutSchema, status=201)
@requires("manage_oauth")
def create_oauth_app():
    """Register an OAuth app; the client_secret is in this response only."""
    data = load_body(OAuthAppInSchema())
    client, secret = services.create_client(
        data["name"], data["callback_urls"], confidential=not data["is_public"], trusted=data["is_trusted"],
        grant_types=data["grant_types"], description=data["description"], homepage=data["homepage"],
        icon_url=data["icon_url"], creator_id=current_caller().user.id,
        allow_http=current_app.config["ALLOW_HTTP_REDIRECTS"],
    )
    db.session.commit()
    return jsonify(_out(client, secret)), 201


@bp.get("/oauth/apps")
@documented(response=OAuthAppOutSchema, many=True, params=PAGING)
@requires("manage_oauth")
def list_oauth_apps():
    """OAuth apps, oldest first, paged."""
    page, per_page = paging()
    return jsonify([_out(c) for c in services.list_clients(page * per_page, per_page)])


@bp.get("/oauth/apps/<app_id>")
@documented(response=OAuthAppOutSchema)
@requires("manage_oauth")
def get_oauth_app(app_id: str):
    """One OAuth app (never its secret)."""
    return jsonify(_out(services.get_client(app_id)))


@bp.put("/oauth/apps/<app_id>")
@documented(body=OAuthAppUpdateSchema, response=OAuthAppOutSchema)
@requires("manage_oauth")
def update_oauth_app(app_id: str):
    """Replace an app's editable fields; the secret and client type stay."""
    client = services.get_client(app_id)
    data = load_body(OAuthAppUpdateSchema())
    if data.get("id") not in (None, app_id):
        raise InvalidInput("id in the body must equal the app id in the URL.")
    services.update_client(
        client, name=data["name"], redirect_uris=data["callback_urls"], trusted=data["is_trusted"],
        description=data["description"], homepage=data["homepage"], icon_url=data["icon_url"],
        grant_types=data["grant_types"], allow_http=current_app.config["ALLOW_HTTP_REDIRECTS"],
    )
    db.session.commit()
    return jsonify(_out(client))


@bp.delete("/oauth/apps/<app_id>")
@documented(response=StatusOKSchema)
@requires("manage_oauth")
def delete_oauth_app(app_id: str):
    """Delete an app with its codes and tokens, in one transaction."""
    services.delete_client(services.get_client(app_id))
    db.session.commit()
    return jsonify({"status": "OK"})


@bp.post("/oauth/apps/<app_id>/regen_secret")
@documented(response=OAuthAppOutSchema)
@requires("manage_oauth")
def regenerate_oauth_app_secret(app_id: str):
    """A new client secret, shown in this response only; the old one stops working."""
    client = services.get_client(app_id)
    secret = services.rotate_client_secret(client)
    db.session.commit()
    return jsonify(_out(client, secret))
