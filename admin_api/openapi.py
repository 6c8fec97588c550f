"""GET /api/v4/openapi.json: the OpenAPI 3 document of /api/v4 (SPEC 7).

A view says what it reads and answers with `@documented(...)`, placed right under its route
decorator; everything else comes from the app itself: paths and path parameters from the
URL map, the summary from the view's docstring, security from `@public`. The marshmallow
schemas are the single source of the bodies, so the document cannot drift from the code
that parses and dumps them. Built on the first request and kept for the process: no
database or network at import or factory time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask, current_app, jsonify
from marshmallow import Schema, fields

from admin_api.auth import is_public, public
from admin_api.blueprint import bp
from schemas import config as config_schemas
from schemas.common import AppErrorSchema

_DOC_ATTR = "_authflow_openapi"
_CACHE_KEY = "authflow_openapi"
_RULE_ARG = re.compile(r"<(?:(?P<converter>[a-zA-Z_]\w*)(?:\([^)]*\))?:)?(?P<name>\w+)>")
_CONVERTER_TYPES = {"int": "integer", "float": "number"}

# A body or response: a marshmallow Schema class, or a plain JSON Schema for the few bodies
# that are not objects with fixed fields (a bare string, a string map, a multipart form).
SchemaLike = type[Schema] | dict[str, Any]


@dataclass(frozen=True)
class Param:
    """A query (or header) parameter the view reads with `request.args` / `request.headers`."""

    name: str
    schema: dict[str, Any]
    description: str = ""
    location: str = "query"
    required: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "in": self.location, "required": self.required,
                "description": self.description, "schema": self.schema}


PAGING = (
    Param("page", {"type": "integer", "minimum": 0, "default": 0}, "0-based page number."),
    Param("per_page", {"type": "integer", "minimum": 0, "default": 60}, "Page size; at most 200 are returned."),
)


def flag(name: str, description: str) -> Param:
    """A boolean query parameter (`true`/`false`, `1`/`0`)."""
    return Param(name, {"type": "boolean"}, description)


@dataclass(frozen=True)
class Doc:
    body: SchemaLike | None = None
    body_type: str = "application/json"
    body_required: bool = True
    response: SchemaLike | None = None
    response_type: str = "application/json"
    status: int = 200
    many: bool = False
    params: tuple[Param, ...] = ()
    # Other documented answers, status -> (description, schema or None for the AppError).
    extra: dict[int, tuple[str, SchemaLike | None]] = field(default_factory=dict)


def documented(**kw) -> Any:
    """Describe a view's request body, success response and query parameters for the document."""
    doc = Doc(**{**kw, "params": tuple(kw.get("params", ()))})

    def decorator(view):
        setattr(view, _DOC_ATTR, doc)
        return view

    return decorator


# --- the builder -----------------------------------------------------------------------------


def _content(media_type: str, schema: SchemaLike | None, many: bool = False) -> dict[str, Any]:
    if schema is None:  # a file download, or JSON the view does not pin down
        schema = {} if media_type.endswith("json") else {"type": "string", "format": "binary"}
    if many:
        schema = {"type": "array", "items": schema}
    return {media_type: {"schema": schema}}


def _summary(view) -> str:
    text = (view.__doc__ or "").strip()
    return " ".join(text.split("\n\n")[0].split())


def _path_and_params(rule: str) -> tuple[str, list[dict[str, Any]]]:
    params = []
    for match in _RULE_ARG.finditer(rule):
        kind = _CONVERTER_TYPES.get(match["converter"] or "", "string")
        params.append({"name": match["name"], "in": "path", "required": True, "schema": {"type": kind}})
    return _RULE_ARG.sub(lambda m: "{" + m["name"] + "}", rule), params


def _operation(view, path_params: list[dict[str, Any]], operation_id: str, tag: str) -> dict:
    doc: Doc = getattr(view, _DOC_ATTR, None) or Doc()
    success = {"description": "Success.", "content": _content(doc.response_type, doc.response, doc.many)}
    responses: dict[str, Any] = {str(doc.status): success, "4XX": "Error"}
    for status, (description, schema) in sorted(doc.extra.items()):
        responses[str(status)] = {"description": description,
                                  "content": _content("application/json", schema or AppErrorSchema)}
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": _summary(view),
        "tags": [tag],
        "parameters": path_params + [p.to_dict() for p in doc.params],
        "responses": responses,
    }
    if doc.body is not None:
        op["requestBody"] = {"required": doc.body_required, "content": _content(doc.body_type, doc.body)}
    if is_public(view):
        op["security"] = []
    return op


def build_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI 3.0 document of every /api/v4 route of `app`."""
    plugin = MarshmallowPlugin()
    spec = APISpec(
        title="authflow admin API",
        version="4",
        openapi_version="3.0.3",
        plugins=[plugin],
        info={"description": "Mattermost-style administration API (/api/v4). Errors use the AppError shape."},
    )
    # The configuration's strict JSON fields are custom marshmallow fields; name their types.
    plugin.map_to_openapi_type(config_schemas.Bool, fields.Boolean)
    plugin.map_to_openapi_type(config_schemas.Int, fields.Integer)
    plugin.map_to_openapi_type(config_schemas.Str, fields.String)
    spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer",
                                               "description": "A personal access token or OAuth access token."})
    spec.components.schema("AppError", schema=AppErrorSchema)
    spec.components.response("Error", {"description": "An error (AppError shape, SPEC 1.2).",
                                       "content": {"application/json": {"schema": "AppError"}}})

    paths: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    prefix = bp.url_prefix + "/"
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith(prefix):
            continue
        view = app.view_functions[rule.endpoint]
        path, path_params = _path_and_params(rule.rule)
        tag = path[len(prefix):].split("/")[0]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            operation_id = rule.endpoint.rsplit(".", 1)[-1]
            if operation_id in taken:
                operation_id = "_".join([operation_id, method.lower(), *re.findall(r"\w+", path)[-1:]])
            taken.add(operation_id)
            paths.setdefault(path, {})[method.lower()] = _operation(view, path_params, operation_id, tag)
    for path, operations in paths.items():
        spec.path(path=path, operations=operations)
    document = spec.to_dict()
    document["security"] = [{"bearer": []}]
    return document


@bp.get("/openapi.json")
@documented(response={"type": "object"})
@public
def openapi_document():
    """This OpenAPI 3 document of /api/v4."""
    document = current_app.extensions.get(_CACHE_KEY)
    if document is None:
        document = current_app.extensions[_CACHE_KEY] = build_document(current_app)
    return jsonify(document)
