"""Bad input never answers 5xx: every route, every method, junk bodies, as an admin.

The only documented 500s are backend failures (SPEC 6.7 storage test, 4.6 unhealthy ping);
their routes run here against a healthy local configuration, so none is expected either.
"""

from __future__ import annotations

import re

JUNK_BODIES = [
    None,
    ("application/json", "{not json"),
    ("application/json", "[]"),
    ("application/json", '{"a": {"b": [1, null, true]}, "name": 5}'),
    ("application/json", "null"),
    ("application/json", '{"name": "a\\u0000b", "display_name": "\\u0000", "default_team_id": "\\u0000", '
                         '"callback_urls": ["https://x.example.org/\\u0000"], "type": "\\u0000", "status": "\\u0000", '
                         '"password": "\\u0000", "invite": "\\u0000", "user_ids": ["\\u0000"]}'),
    ("application/json", '{"name": "ok-name", "display_name": "D", "type": "O", "callback_urls": ["https://x.example.org/cb"], '
                         '"priority": 99999999999999999999, "page": 1e308}'),
    ("application/x-www-form-urlencoded", "a=1&a=2&token=&grant_type=%00"),
    ("text/plain", "\x00\xff junk"),
    ("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"files\"\r\n\r\nzz\r\n--x--"),
]
PARAM_VALUES = ["y" * 26, "..%2f", "0", "a%00b"]


def _routes(app):
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield rule, method


def _paths(rule) -> list[str]:
    paths = []
    for value in PARAM_VALUES:
        paths.append(re.sub(r"<(?:[^:<>]+:)?[^<>]+>", value, rule.rule))
    return paths


def test_no_route_answers_5xx_to_junk(app, client, make_user, make_pat):
    admin = {"Authorization": f"Bearer {make_pat(make_user(admin=True))}"}
    failures = []
    for rule, method in _routes(app):
        for path in _paths(rule):
            for body in JUNK_BODIES:
                kwargs = {"headers": admin}
                if body is not None:
                    kwargs["content_type"], kwargs["data"] = body
                resp = client.open(path + "?page=-1&per_page=x&h=&request=zz&client_id=%00", method=method, **kwargs)
                if resp.status_code >= 500:
                    failures.append((method, path, body and body[0], resp.status_code, resp.get_data(as_text=True)[:200]))
    assert failures == [], failures
