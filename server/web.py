"""The web renderers of registered games that live outside the browser client's folder.

A game's registration (:attr:`cardhall.engine.plugins.GameSpec.web_renderer`)
names how the browser client draws it: a URL path this server serves already
(the built-in games' ``/web/js/games/*.js``), or the path of an ES module file
of the game's own. Such a file, and the ``.js``/``.css`` files beside it (its
own imports), are served at ``/games/<game>/<file>``; the catalogue
(``GET /api/games``, ``renderer``) gives the URL. A renderer imports the
client's shared modules by absolute path (``/web/js/dom.js``, ...).

>>> from pathlib import Path
>>> from cardhall.engine.plugins import GameSpec
>>> renderer_url(GameSpec(name="toy", engine="m:C", web_renderer=Path("/x/toy.js")))
'/games/toy/toy.js'
>>> renderer_url(GameSpec(name="toy", engine="m:C")) is None
True
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from cardhall.engine import plugins
from cardhall.engine.plugins import GameSpec

#: what a game's renderer folder may serve (suffix -> media type)
MEDIA = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def renderer_url(spec: GameSpec) -> str | None:
    """The URL path of ``spec``'s web renderer, or None when it has none."""
    renderer = spec.web_renderer
    if renderer is None:
        return None
    if isinstance(renderer, Path):
        return f"/games/{spec.name}/{renderer.name}"
    return renderer


def renderer_file(game: str, name: str) -> Path | None:
    """The file served at ``/games/<game>/<name>``: ``name`` in the folder of
    ``game``'s renderer file, a ``.js`` or ``.css`` file and nothing outside
    that folder; None otherwise (an unknown game, a game without such a file)."""
    spec = plugins.games().get(game)
    if spec is None or not isinstance(spec.web_renderer, Path):
        return None
    folder = spec.web_renderer.resolve().parent
    candidate = (folder / name).resolve()
    if candidate.parent != folder or candidate.suffix not in MEDIA or not candidate.is_file():
        return None
    return candidate


async def _serve(request: Request) -> Response:
    found = renderer_file(request.path_params["game"], request.path_params["name"])
    if found is None:
        return PlainTextResponse("no such renderer file", 404)
    return FileResponse(found, media_type=MEDIA[found.suffix], headers={"cache-control": "no-cache"})


def renderer_routes() -> list[Route]:
    """``GET /games/{game}/{name}``: a registered game's renderer files."""
    return [Route("/games/{game}/{name}", _serve, methods=["GET"])]
