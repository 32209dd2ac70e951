"""The service serves the browser client (no Chromium needed): ``/`` is the page, ``/web/...``
its modules and stylesheet (package data of ``clients``), while ``/ws`` and ``/api/*`` keep
working beside them."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import websockets

from tests.server.conftest import LiveServer, running_server

WEB = Path(__file__).resolve().parents[2] / "clients" / "web"


@pytest.fixture
async def live() -> AsyncIterator[LiveServer]:
    async with running_server() as srv:
        yield srv


async def test_page_modules_and_routes(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.http) as http:
        page = await http.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/web/js/app.js">' in page.text
        # every module the page imports, transitively, is served as JavaScript: from app.js, and
        # the games' renderers, which the page imports from the catalogue's URLs (games/index.js)
        seen: set[str] = set()
        renderers = [g["renderer"] for g in (await http.get("/api/games")).json()["games"] if "renderer" in g]
        assert len(renderers) == 5 and all(r.startswith("/web/js/games/") for r in renderers), renderers
        todo = ["/web/js/app.js", "/web/js/rules.js", *renderers]  # rules.js: the rules pages' module
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            r = await http.get(path)
            assert r.status_code == 200, path
            assert "javascript" in r.headers["content-type"], (path, r.headers["content-type"])
            base = path.rsplit("/", 1)[0]
            todo += re.findall(r'from "(/web/[^"]+)"', r.text)
            for rel in re.findall(r'from "(\.{1,2}/[^"]+)"', r.text):
                parts = (base + "/" + rel).split("/")
                out: list[str] = []
                for p in parts:
                    if p == "..":
                        out.pop()
                    elif p != ".":
                        out.append(p)
                todo.append("/".join(out))
        assert len(seen) == len(list((WEB / "js").rglob("*.js")))  # no module left unused or unserved
        assert (await http.get("/web/css/style.css")).headers["content-type"].startswith("text/css")
        assert (await http.get("/web/nothing.js")).status_code == 404
        assert (await http.get("/api/tables")).json() == []
    async with websockets.connect(live.url, subprotocols=["cardhall.v1.json"]) as ws:  # type: ignore[list-item]
        await ws.send('{"type": "ping", "id": 1}')
        assert await ws.recv() == '{"type":"pong","re":1}'


@pytest.mark.parametrize("path", ["/web/", "/web/js/", "/web/../server/app.py"])
async def test_no_listing_or_escape(live: LiveServer, path: str) -> None:
    async with httpx.AsyncClient(base_url=live.http) as http:
        r = await http.get(path)
        assert r.status_code == 404
