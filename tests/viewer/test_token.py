"""The live viewer answers only whoever holds its token: 127.0.0.1 is every local user's, so a
request without the token the viewer printed — on any route: the page, its static files, the
API, a sweep's pages — gets 403; the token opens it as a query parameter, an Authorization
header or the cookie the first answer sets. The Host check (DNS rebinding) still holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.viewer.server import CSP, ViewerServer
from podium.viewer.sweep_data import SweepView
from tests.recorded_run import RecordedRun
from tests.viewer.test_server import Reply, request, server, serving
from tests.viewer.test_sweep_page import DONE, make_sweep

__all__ = ["server"]  # the fixture, used by name

RUN_ROUTES = ["/", "/static/app.js", "/static/style.css", "/api/run", "/api/node/5",
              "/api/node/7/output", "/api/search?q=x", "/nope"]  # fmt: skip
SWEEP_ROUTES = ["/", "/static/sweep.js", "/api/sweep", f"/runs/{DONE}", f"/runs/{DONE}/",
                f"/runs/{DONE}/api/run", f"/runs/{DONE}/api/node/5"]  # fmt: skip


@pytest.fixture
def sweep_server(tmp_path: Path) -> Iterator[ViewerServer]:
    with serving(SweepView(make_sweep(tmp_path))) as srv:
        yield srv


def wrong_ways(srv: ViewerServer) -> dict[str, tuple[str, dict[str, str]]]:
    """Requests another local user can make: (query to add, headers), each without the token."""
    near = srv.token[:-1] + ("A" if srv.token[-1] != "A" else "B")
    return {
        "nothing": ("", {}),
        "empty query": ("token=", {}),
        "wrong query": (f"token={near}", {}),
        "prefix query": (f"token={srv.token[:-1]}", {}),
        "longer query": (f"token={srv.token}x", {}),
        "wrong header": ("", {"Authorization": f"token {near}"}),
        "bare header": ("", {"Authorization": srv.token}),  # no scheme
        "wrong cookie": ("", {"Cookie": f"{srv.cookie_name}={near}"}),
        "other port's cookie": ("", {"Cookie": f"podium-viewer-1={srv.token}"}),
    }


def with_query(path: str, query: str) -> str:
    if not query:
        return path
    return f"{path}{'&' if '?' in path else '?'}{query}"


def assert_refused(reply: Reply) -> None:
    assert reply.status == 403
    assert reply.body.startswith(b"403 forbidden: open the URL the viewer printed")
    assert b"toy" not in reply.body and b"<" not in reply.body  # nothing of the run, no page
    assert reply.headers["Content-Security-Policy"] == CSP
    assert reply.headers["Set-Cookie"] is None


def refused_everywhere(srv: ViewerServer, routes: list[str]) -> None:
    for path in routes:
        for how, (query, headers) in wrong_ways(srv).items():
            for method in ("GET", "HEAD"):
                reply = request(srv, with_query(path, query), headers, method, token=False)
                if method == "HEAD":
                    assert reply.status == 403, (path, how)
                else:
                    assert_refused(reply)


def test_every_route_of_a_run_refuses_a_request_without_the_token(server: ViewerServer) -> None:
    refused_everywhere(server, RUN_ROUTES)


def test_every_route_of_a_sweep_refuses_a_request_without_the_token(
    sweep_server: ViewerServer,
) -> None:
    refused_everywhere(sweep_server, SWEEP_ROUTES)


@pytest.mark.parametrize("path", RUN_ROUTES)
def test_the_token_opens_every_route(server: ViewerServer, path: str) -> None:
    """By query (which also sets the cookie), by header (either scheme) and by cookie."""
    expected = 404 if path == "/nope" else 200
    by_query = request(server, with_query(path, f"token={server.token}"), token=False)
    assert by_query.status == expected
    cookie = by_query.headers["Set-Cookie"]
    assert cookie == (f"{server.cookie_name}={server.token}; Path=/; HttpOnly; SameSite=Strict")
    for headers in ({"Authorization": f"token {server.token}"},
                    {"Authorization": f"Bearer {server.token}"},
                    {"Cookie": f"other=1; {cookie.split(';')[0]}; more=2"}):  # fmt: skip
        reply = request(server, path, headers, token=False)
        assert reply.status == expected, headers
        assert reply.headers["Set-Cookie"] is None  # only a URL with the token sets it


def test_the_token_opens_a_sweeps_pages(sweep_server: ViewerServer) -> None:
    for path in SWEEP_ROUTES:
        reply = request(sweep_server, path)
        assert reply.status == (301 if path == f"/runs/{DONE}" else 200), path


def test_the_token_is_random_per_server(recorded_run: RecordedRun) -> None:
    with serving(recorded_run.root) as one, serving(recorded_run.root) as two:
        assert one.token != two.token and len(one.token) >= 43
        assert request(two, "/api/run", {"Authorization": f"token {one.token}"},
                       token=False).status == 403  # fmt: skip


@pytest.mark.parametrize("host", ["evil.example:{port}", "localhost.evil.example:{port}", ""])
def test_dns_rebinding_is_refused_even_with_the_token(server: ViewerServer, host: str) -> None:
    """A page on another name that resolves to 127.0.0.1, even one that learnt the token."""
    for path in ("/", "/api/run", f"/api/run?token={server.token}"):
        reply = request(server, path, {"Host": host.format(port=server.port)})
        assert (reply.status, reply.body) == (403, b"403 forbidden host\n")
