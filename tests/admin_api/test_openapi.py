"""SPEC 7: GET /api/v4/openapi.json documents every /api/v4 route from the schemas, and
schemathesis fuzzes every documented operation (no 5xx; statuses, content types and bodies
as documented).
"""

from __future__ import annotations

import re

import schemathesis
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

DOC = "/api/v4/openapi.json"

# Documented, but not fuzzed here, each for a reason; their own tests cover them.
NOT_FUZZED = {
    # Answer 500 by design when the storage backend fails the probe (SPEC 6.7).
    ("POST", "/api/v4/file/test"): "documented 500 on backend failure",
    ("POST", "/api/v4/file/s3_test"): "documented 500 on backend failure",
    # Call out to the other server named in the invite / authenticate a remote server.
    ("POST", "/api/v4/remotecluster/accept_invite"): "calls another server",
    ("POST", "/api/v4/remotecluster/confirm_invite"): "server-to-server handshake",
    ("POST", "/api/v4/remotecluster/ping"): "server-to-server keep-alive",
    # Multipart uploads: schemathesis' generated forms say little the upload tests do not.
    ("POST", "/api/v4/files"): "multipart upload",
    ("POST", "/api/v4/license"): "multipart upload",
    # A fuzzed configuration would point the log file and file storage at arbitrary paths
    # on the test machine (and could switch off the services the other operations need).
    ("PUT", "/api/v4/config"): "would write fuzzed paths into the running configuration",
    ("PUT", "/api/v4/config/patch"): "would write fuzzed paths into the running configuration",
    ("PATCH", "/api/v4/config/patch"): "would write fuzzed paths into the running configuration",
}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def test_openapi_document_is_public_and_valid(client):
    resp = client.get(DOC)
    assert resp.status_code == 200
    document = resp.get_json()
    assert document["openapi"].startswith("3.")
    validate(document)
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": document["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert set(document["components"]["schemas"]["AppError"]["properties"]) == {
        "id", "message", "detailed_error", "request_id", "status_code"}


def test_every_api_route_is_documented(app, client):
    paths = client.get(DOC).get_json()["paths"]
    missing = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v4/"):
            continue
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            operation = paths.get(_openapi_path(rule.rule), {}).get(method.lower())
            if operation is None or not operation["summary"]:
                missing.append((method, rule.rule))
    assert missing == []


def test_public_views_need_no_token_and_the_rest_a_bearer(client):
    document = client.get(DOC).get_json()
    assert document["security"] == [{"bearer": []}]
    public = {(m.upper(), p) for p, ops in document["paths"].items() for m, op in ops.items() if op.get("security") == []}
    assert public == {
        ("GET", "/api/v4/openapi.json"),
        ("GET", "/api/v4/system/ping"),
        ("POST", "/api/v4/remotecluster/confirm_invite"),
        ("POST", "/api/v4/remotecluster/ping"),
    }


def test_errors_are_documented_as_app_errors(client):
    for ops in client.get(DOC).get_json()["paths"].values():
        for op in ops.values():
            assert op["responses"]["4XX"] == {"$ref": "#/components/responses/Error"}


def test_document_is_built_once_per_process(app, client):
    first = client.get(DOC).get_json()
    assert app.extensions["authflow_openapi"] == first
    app.extensions["authflow_openapi"] = {"cached": True}
    try:
        assert client.get(DOC).get_json() == {"cached": True}
    finally:
        app.extensions.pop("authflow_openapi")


def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(app, make_user, make_pat, local_files):
    admin = {"Authorization": "Bearer " + make_pat(make_user(admin=True, password="", auth_service="ldap"))}
    schema = schemathesis.openapi.from_wsgi(DOC, app)
    operations = [result.ok() for result in schema.get_all_operations()]
    fuzzed = [op for op in operations if (op.method.upper(), op.path) not in NOT_FUZZED]
    assert {(op.method.upper(), op.path) for op in operations} >= set(NOT_FUZZED)
    assert len(fuzzed) >= 25

    failures = []
    for operation in fuzzed:

        @settings(max_examples=8, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def check(case):
            case.call_and_validate(headers=admin, checks=CHECKS)

        try:
            check()
        except Exception as exc:  # every operation runs; the assertion lists them all
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert failures == [], "\n\n".join(failures)
