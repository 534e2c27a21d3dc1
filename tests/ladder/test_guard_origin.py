"""The Origin check's comparison at its edges (unit tests of arena.ladder.site.guard; the real-server tests are test_guard_csrf.py)."""

from __future__ import annotations

import pytest

from arena.ladder.site.guard import OriginCheck, own_origin, request_origin


def _scope(method: str = "POST", path: str = "/admin/pause", scheme: str = "http", **headers: str) -> dict:
    return {"type": "http", "method": method, "path": path, "scheme": scheme,
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}  # fmt: skip


@pytest.mark.parametrize(
    "scheme, host, origin, same",
    [
        ("http", "127.0.0.1:8765", "http://127.0.0.1:8765", True),
        ("http", "LADDER.example.org", "http://ladder.example.org:80", True),  # default port, case
        ("https", "ladder.example.org", "https://ladder.example.org", True),
        ("https", "ladder.example.org", "http://ladder.example.org", False),  # scheme
        ("http", "127.0.0.1:8765", "http://127.0.0.1:8766", False),  # another port: same site, not same origin
        ("http", "a.example.org", "http://b.example.org", False),  # a sibling subdomain
        ("http", "[::1]:8765", "http://[::1]:8765", True),
        ("http", "127.0.0.1:8765", "null", False),
        ("http", "127.0.0.1:8765", "http://127.0.0.1:notaport", False),
        ("http", "127.0.0.1:8765", "javascript://127.0.0.1:8765", False),
    ],
)
def test_origins_compare_by_scheme_host_and_port(scheme: str, host: str, origin: str, same: bool):
    scope = _scope(scheme=scheme, host=host, origin=origin)
    assert (request_origin(scope) is not None and request_origin(scope) == own_origin(scope)) is same


def test_the_referer_stands_in_for_a_missing_origin_but_not_for_a_null_one():
    assert request_origin(_scope(host="h:1", referer="http://h:1/admin?x=1")) == ("http", "h", 1)
    assert request_origin(_scope(host="h:1", origin="null", referer="http://h:1/admin")) is None


@pytest.mark.parametrize(
    "scope, checked",
    [
        (_scope(cookie="arena_session=x"), True),
        (_scope(path="/signin"), True),  # sign-in: checked with no cookie (login CSRF)
        (_scope(), False),  # nothing to borrow: the app answers 401/403
        (_scope(cookie="arena_session=x", authorization="Bearer t"), False),  # a Bearer call
        (_scope(method="GET", cookie="arena_session=x"), False),
        (_scope(method="PUT", cookie="arena_session=x"), True),
    ],
)
def test_which_requests_are_checked(scope: dict, checked: bool):
    assert OriginCheck(lambda *a: None).checked(scope) is checked  # type: ignore[arg-type]
