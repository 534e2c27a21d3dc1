"""Behind the TLS proxy of docs/ladder.md: ``Secure`` cookies, and forwarded headers believed from the proxy only.

The proxy is played by a client bound to 127.0.0.2 (``[server] trusted_proxies
= ["127.0.0.2"]``) sending what the documented nginx configuration sends; a
client on 127.0.0.1 forges the same headers.  On the main branch before this,
uvicorn believed X-Forwarded-Proto from any 127.0.0.1 client and from no one
else, and the documented nginx configuration sent none, so the cookie was never
``Secure`` behind the proxy.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from docker_support import engine_or_skip
from guard_support import NO_BUILDS
from ladder_support import Ladder, served

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]

PROXY = "127.0.0.2"
SITE = "https://ladder.example.org"
#: What the documented nginx configuration adds to every request it passes on.
FORWARDED = {"Host": "ladder.example.org", "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's proxy tests")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", NO_BUILDS, f'server.trusted_proxies=["{PROXY}"]')
    with served(lad, client):
        yield lad


def _client(source: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30)


def _session_cookie(response: httpx.Response) -> str:
    (cookie,) = [v for k, v in response.headers.multi_items() if k == "set-cookie" and v.startswith("arena_session=")]
    return cookie.lower()


def test_the_session_cookie_is_secure_behind_the_documented_proxy(ladder: Ladder):
    with _client(PROXY) as proxy:
        response = proxy.post(ladder.url + "/signin", data={"token": ladder.tokens["alpha"]},
                              headers={**FORWARDED, "Origin": SITE})  # fmt: skip
    assert response.status_code == 303, response.text
    cookie = _session_cookie(response)
    assert "; secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie, cookie


def test_through_the_proxy_a_plain_http_origin_is_another_origin(ladder: Ladder):
    with _client(PROXY) as proxy:
        response = proxy.post(ladder.url + "/signin", data={"token": ladder.tokens["alpha"]},
                              headers={**FORWARDED, "Origin": "http://ladder.example.org"})  # fmt: skip
    assert response.status_code == 403


def test_forwarded_headers_from_anyone_else_change_nothing(ladder: Ladder):
    with _client("127.0.0.1") as forger:
        # The forged scheme is not believed: the site's origin stays http://127.0.0.1:PORT ...
        plain = forger.post(ladder.url + "/signin", data={"token": ladder.tokens["alpha"]},
                            headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9", "Origin": ladder.url})  # fmt: skip
        assert plain.status_code == 303
        assert "; secure" not in _session_cookie(plain), "a forged X-Forwarded-Proto made the cookie Secure"
        # ... so an https origin with the forged headers is refused, as it would be without them.
        forged = forger.post(ladder.url + "/signin", data={"token": ladder.tokens["alpha"]},
                             headers={**FORWARDED, "Origin": SITE})  # fmt: skip
        assert forged.status_code == 403
