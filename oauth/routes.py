"""HTTP surface of the OAuth provider: authorize, login, consent, token (SPEC 2.2-2.4)."""

from __future__ import annotations

from urllib.parse import urlsplit

from authlib.oauth2.rfc6749.errors import InvalidRequestError, OAuth2Error
from flask import Blueprint, current_app, jsonify, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError, validate_csrf
from wtforms.validators import ValidationError as CSRFValidationError

from errors import PageError
from extensions import db
from oauth import services, sessions, throttle
from oauth.scopes import SUPPORTED_SCOPES
from oauth.server import TOKEN_PATH, BodyOAuth2Request, authorization, read_body

bp = Blueprint("oauth", __name__, template_folder="templates")

FLOW_PATH = "/index.php/login/flow"
REVOKE_PATH = "/index.php/apps/oauth2/api/v1/revoke"
INTROSPECT_PATH = "/index.php/apps/oauth2/api/v1/introspect"
THROTTLED_MESSAGE = "too many failed attempts"
THROTTLED_LOGIN_MESSAGE = "Too many failed sign-in attempts. Wait a few minutes and try again."
SCOPE_LABELS = {
    "profile": "Your basic profile (username, name, email)",
    "api": "Use the admin API with your permissions",
    "offline_access": "Stay connected when you are away",
}


def issuer() -> str:
    """The issuer identifier: the configured base URL (never the Host header in production)."""
    return current_app.config["AUTHFLOW_BASE_URL"] or request.host_url.rstrip("/")


def _see_other(location: str):
    return redirect(location, code=303)


def _check_csrf() -> None:
    try:
        validate_csrf(request.form.get("csrf_token"))
    except (CSRFValidationError, CSRFError) as exc:
        raise PageError("The form has expired. Reload the page and try again.") from exc


def _safe_next(target: str | None) -> str:
    """Only same-origin paths are followed after login (no open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return url_for("oauth.home")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return url_for("oauth.home")
    return target


@bp.get("/index.php/apps/oauth2/authorize")
def authorize():
    """Validate an authorization request and send the browser to the login URL."""
    try:
        pending = services.validate_authorize_request(
            request.args,
            require_pkce=current_app.config["REQUIRE_PKCE"],
            ttl=current_app.config["AUTH_REQUEST_TTL"],
        )
    except services.RedirectError as err:
        return _see_other(services.error_redirect(err, issuer()))
    db.session.commit()
    return _see_other(f"{issuer()}{FLOW_PATH}?request={pending.id}")


@bp.route(FLOW_PATH, methods=["GET", "POST"])
def login_flow():
    """The login URL: the login form when signed out, then the consent page."""
    pending = services.get_pending_request(request.args.get("request"))
    user = sessions.current_user()
    here = f"{FLOW_PATH}?request={pending.id}"
    if user is None:
        if request.method == "POST":
            return _see_other(here)
        return _login_page(next_url=here, client_name=pending.client.name)
    if request.method == "POST":
        _check_csrf()
        decision = request.form.get("decision")
        if decision not in ("allow", "deny"):
            raise PageError("Choose Allow or Deny.")
        return _decide(pending, user, decision == "allow")
    if pending.client.trusted:
        return _decide(pending, user, True)
    return render_template(
        "consent.html",
        client_name=pending.client.name,
        username=user.username,
        redirect_host=urlsplit(pending.redirect_uri).netloc,
        scopes=pending.scope.split(),
        scope_labels=SCOPE_LABELS,
        action=here,
    )


def _decide(pending, user, allow: bool):
    location = services.decide(
        pending, user, allow, issuer=issuer(), code_ttl=current_app.config["AUTH_CODE_TTL"]
    )
    db.session.commit()
    return _see_other(location)


def _login_page(*, next_url: str, error: str = "", username: str = "", status: int = 200, client_name=""):
    html = render_template(
        "login.html", next=next_url, error=error, username=username, client_name=client_name
    )
    return html, status


@bp.get("/")
def home():
    return render_template("home.html", user=sessions.current_user())


@bp.get("/login")
def login():
    """The login form."""
    return _login_page(next_url=_safe_next(request.args.get("next")))


@bp.post("/login")
def login_submit():
    """Check credentials; 303 to `next` on success, 401 with the form on failure."""
    _check_csrf()
    next_url = _safe_next(request.form.get("next"))
    username = request.form.get("username", "")[:254]
    throttle.check(_limits(), ip=request.remote_addr, username=username, message=THROTTLED_LOGIN_MESSAGE)
    user = services.authenticate(username, request.form.get("password", "")[:1024])
    if user is None:
        db.session.rollback()
        throttle.record_failure(ip=request.remote_addr, username=username)
        return _login_page(
            next_url=next_url, username=username, status=401,
            error="The username or password is incorrect.",
        )
    throttle.reset_user(username)
    sessions.log_in(user)
    db.session.commit()
    return _see_other(next_url)


@bp.post("/logout")
def logout():
    _check_csrf()
    sessions.log_out()
    return _see_other(url_for("oauth.login"))


def _limits() -> throttle.Limits:
    cfg = current_app.config
    return throttle.Limits(
        cfg["THROTTLE_WINDOW_SECONDS"], cfg["THROTTLE_MAX_IP_FAILURES"], cfg["THROTTLE_MAX_USER_FAILURES"]
    )


def _oauth_endpoint(respond, required: str | None = None):
    """Run an RFC endpoint on the body's parameters, once the caller's IP is known not to be
    throttled; malformed bodies get the RFC 6749 error shape.
    """
    throttle.check(_limits(), ip=request.remote_addr, message=THROTTLED_MESSAGE)
    try:
        body = read_body()
        if required and not body.get(required):
            raise InvalidRequestError(f"The {required} parameter is missing.")
        oauth_request = BodyOAuth2Request(body)  # refuses plain http off loopback
    except OAuth2Error as error:
        return authorization.handle_error_response(None, error)
    return respond(oauth_request)


@bp.post(TOKEN_PATH)
def token():
    """RFC 6749 token endpoint: authorization_code, refresh_token, client_credentials."""
    return _oauth_endpoint(authorization.create_token_response, required="grant_type")


@bp.post(REVOKE_PATH)
def revoke():
    """RFC 7009 token revocation."""
    return _oauth_endpoint(lambda req: authorization.create_endpoint_response("revocation", req))


@bp.post(INTROSPECT_PATH)
def introspect():
    """RFC 7662 token introspection (clients see only their own tokens)."""
    return _oauth_endpoint(lambda req: authorization.create_endpoint_response("introspection", req))


@bp.get("/.well-known/oauth-authorization-server")
def metadata():
    """RFC 8414 authorization server metadata; the issuer comes from configuration."""
    base = issuer()
    auth_methods = ["client_secret_basic", "client_secret_post", "none"]
    document = {
        "issuer": base,
        "authorization_endpoint": base + "/index.php/apps/oauth2/authorize",
        "token_endpoint": base + TOKEN_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "introspection_endpoint": base + INTROSPECT_PATH,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": auth_methods,
        "revocation_endpoint_auth_methods_supported": auth_methods,
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "scopes_supported": list(SUPPORTED_SCOPES),
        "authorization_response_iss_parameter_supported": True,
    }
    response = jsonify(document)
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response
