"""Game registration: the games a process knows are discovered, never listed.

A game is one :class:`GameSpec`: its protocol name, its engine class, its own
bot strategies and default bot, its schema document, and optionally a web and
a terminal renderer and a rules page. Everything that lists games (the engine and bot
registries, ``GET /api/games``, the schemas' validator, the browser and
terminal clients, the benchmarks) reads this registry.

Where specs come from, in this order (the first spec of a name wins):

1. **Built-in games**: every module of the package ``cardhall.engine.games``
   that has a module-level ``GAME`` (a :class:`GameSpec`, or a tuple of them).
   A built-in module that fails to import or declares a bad spec raises
   :class:`RegistrationError`: that is a defect of this repository.
2. **Installed games**: the entry points of the group ``cardhall.games``
   (``importlib.metadata.entry_points``). An entry point names a module that
   has ``GAME``, or a :class:`GameSpec` (or tuple) itself, e.g. in a
   plugin's ``pyproject.toml``::

       [project.entry-points."cardhall.games"]
       high_card = "mygames.high_card"

3. **Modules named in** ``CARDHALL_GAMES`` (comma-separated importable module
   names, each with ``GAME``): games that are not installed (tests,
   development), e.g. ``PYTHONPATH=. CARDHALL_GAMES=tests.toygame cardhall serve`` (a module importable from ``sys.path``).

A failure in 2 or 3 (import error, no ``GAME``, a bad spec, a name already
taken) is logged on the ``cardhall.plugins`` logger, naming the module, and
that game is skipped; the others still load. Code can also :func:`register`
a spec directly (or for a block: :func:`registered`); :func:`generation`
changes each time the registry does, so caches built from it can tell.

The registry is discovered on first use (:func:`games`) and
:func:`rediscover` reads the three sources again.

>>> sorted(games())[:3]
['alamo', 'avalanche', 'fixed_limit_holdem']
>>> spec("loco_poker").default_bot, sorted(spec("loco_poker").bot_refs())
('threshold', ['random', 'threshold'])
>>> GameSpec(name="Bad Name", engine="x:Y").check()
Traceback (most recent call last):
...
cardhall.engine.plugins.RegistrationError: game 'Bad Name': the name must match ^[a-z][a-z0-9_]{0,39}$
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import pkgutil
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from cardhall.engine.base import Engine
from cardhall.engine.bots.base import Bot

log = logging.getLogger("cardhall.plugins")

#: the environment variable naming modules of games that are not installed
ENV = "CARDHALL_GAMES"
#: the entry-point group of installed games
ENTRY_POINT_GROUP = "cardhall.games"
#: the package scanned for built-in games
BUILTIN_PACKAGE = "cardhall.engine.games"
#: the ``$id`` prefix of every schema document (protocol/SPEC.md "Schemas and examples")
SCHEMA_BASE = "https://cardhall.invalid/schemas/v1/"
#: the bot every game has: a uniform choice among the legal actions
RANDOM_BOT = "random"
RANDOM_BOT_REF = "cardhall.engine.bots.random_bot:RandomBot"

NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class RegistrationError(ValueError):
    """A game module or spec that cannot be registered; the message names it."""


@functools.lru_cache(maxsize=512)
def resolve(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names (imports the
    module; remembered, as imported modules are: a restore resolves every
    bot's class again).

    Raises ImportError or AttributeError as the import does (not remembered)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def builtin_schema(filename: str) -> Path:
    """The path of ``protocol/schemas/<filename>`` (package data of
    ``cardhall.protocol.schemas``), found without importing that package."""
    found = importlib.util.find_spec("cardhall.protocol.schemas")
    if found is None or not found.submodule_search_locations:
        raise RegistrationError("the package cardhall.protocol.schemas is missing")
    return Path(next(iter(found.submodule_search_locations))) / filename


def builtin_rules(game: str) -> Path:
    """The path of ``engine/games/rules/<game>.md`` (package data of ``cardhall.engine.games``):
    a built-in game's rules page (:attr:`GameSpec.rules`). The real file, links resolved: a
    strict editable install links only the files that existed when it was made."""
    return Path(__file__).resolve().parent / "games" / "rules" / f"{game}.md"


@dataclass(frozen=True)
class Example:
    """How ``protocol/examples/record.py`` records a game's example (a whole
    first hand from a real server): ``options`` for a short hand (game and
    table options), ``until`` the event type that ends it."""

    options: Mapping[str, Any] = field(default_factory=dict)
    until: str = "hand_end"


@dataclass(frozen=True)
class GameSpec:
    """What one game registers.

    ``name``: the protocol game name (``create_table.game``), ``^[a-z][a-z0-9_]{0,39}$``.
    ``engine``: the :class:`cardhall.engine.base.Engine` subclass, or a
    ``"module:Class"`` reference imported on first use; its ``game`` is ``name``.
    ``bots``: the game's own strategies, bot name -> :class:`cardhall.engine.bots.base.Bot`
    subclass or ``"module:Class"`` (``random`` comes with every game and may not be redefined).
    ``default_bot``: the strategy seated when none is named (``random`` or one of ``bots``).
    ``schema``: the game's JSON Schema document (protocol/SPEC.md "Schemas and
    examples": ``action``, ``legal_action``, ``ev_<type>``, ``view``, ``result``,
    ``match_options``, ``event_frame``, ``snapshot``, ``act``), a file whose ``$id``
    is :data:`SCHEMA_BASE` + its file name; None: the game's frames are checked
    against the generic shapes of ``server.json`` only.
    ``web_renderer``: how the browser client draws the game: a URL path this
    server already serves (``"/web/js/games/loco.js"``), or the path of an ES
    module file (served by ``cardhall.server.web``); None: the generic renderer.
    ``tui_renderer``: ``"module:name"``, the game's parts in the terminal client: a callable
    drawing the table, ``text(state, you, names) -> str`` (``state`` the game's view, ``you``
    the viewer's seat or None, ``names`` seat -> name), which may also carry (as attributes;
    ``cardhall.clients.tui.render.TuiGame`` is such an object) any of: ``event(event, names)
    -> str | None`` its events' log lines (None: the shared text), ``keys`` the action keys
    it uses (of ``fold``, ``check_call``, ``bet_raise``, ``all_in``, ``snowfall``, ``play``),
    ``preview(typed, legal, state) -> str`` what the text typed would do, ``parse(key, legal,
    typed) -> action | None`` a key played with the text typed, ``words(action) -> str | None``
    an action in words, ``hint`` what the amount field takes; each one absent is the generic
    behaviour (generic event lines, a key shown while the legal actions have its type).
    None: the game is drawn as data, its legal actions numbered.
    ``rules``: the game's "How to play" page, a Markdown file (CommonMark, no raw HTML; first
    line ``# How to play <Title>``, ``##`` sections, card faces in fenced blocks whose info
    string is ``cards``, one ``label: CARDS`` row a line in protocol card codes, ``??`` face
    down), served by ``cardhall.server.rules`` at ``/rules/<name>`` (as HTML) and
    ``/rules/<name>.md``; None: the game has no rules page.
    ``example``: how ``protocol/examples`` records the game (:class:`Example`);
    None: it has no recorded example.
    ``quick_options``: game options that make a whole match short (a few
    hands or a few minutes of bots' play), for tests, demos and load tools
    that play every registered game; each is one of the game's options,
    checked when a table is created with them. Empty: the game's defaults
    are already short.
    ``order``: the game's place in the catalogue (lower first, then by name).
    ``source``: where the spec came from (filled in by the registry).
    """

    name: str
    engine: type[Engine] | str
    bots: Mapping[str, type[Bot] | str] = field(default_factory=dict)
    default_bot: str = RANDOM_BOT
    schema: Path | None = None
    web_renderer: str | Path | None = None
    tui_renderer: str | None = None
    rules: Path | None = None
    example: Example | None = None
    quick_options: Mapping[str, Any] = field(default_factory=dict)
    order: int = 1000
    source: str = ""

    def engine_class(self) -> type[Engine]:
        """The engine class (imported on first use); raises ImportError or AttributeError."""
        if isinstance(self.engine, str):
            return resolve(self.engine)
        return self.engine

    def bot_refs(self) -> dict[str, type[Bot] | str]:
        """Bot name -> class or ``"module:Class"``: ``random`` and the game's own."""
        return {RANDOM_BOT: RANDOM_BOT_REF, **self.bots}

    def bot_class(self, name: str) -> type[Bot]:
        """The class of bot ``name``; KeyError for a name the game has not."""
        ref = self.bot_refs()[name]
        return resolve(ref) if isinstance(ref, str) else ref

    def check(self) -> None:
        """Raise :class:`RegistrationError` (naming the game) when the spec is
        malformed: name, engine (a string is checked for form only), bots,
        default bot, the schema document (a JSON object with the right ``$id``),
        the renderers' form, the rules page (an existing ``.md`` file)."""
        def bad(why: str) -> RegistrationError:
            return RegistrationError(f"game {self.name!r}: {why}")

        if not isinstance(self.name, str) or not NAME.match(self.name):
            raise bad(f"the name must match {NAME.pattern}")
        if isinstance(self.engine, str):
            if not _REF.match(self.engine):
                raise bad(f"engine {self.engine!r} is not a 'module:Class' reference")
        elif not (isinstance(self.engine, type) and issubclass(self.engine, Engine)):
            raise bad("engine must be an Engine subclass or a 'module:Class' reference")
        elif getattr(self.engine, "game", None) != self.name:
            raise bad(f"its engine {self.engine.__name__} says game = {getattr(self.engine, 'game', None)!r}")
        for bot, ref in self.bots.items():
            if not isinstance(bot, str) or not NAME.match(bot) or bot == RANDOM_BOT:
                raise bad(f"bot name {bot!r} is not allowed (a name like 'equity'; 'random' is every game's)")
            if isinstance(ref, str) and not _REF.match(ref):
                raise bad(f"bot {bot!r}: {ref!r} is not a 'module:Class' reference")
            if not isinstance(ref, str) and not (isinstance(ref, type) and issubclass(ref, Bot)):
                raise bad(f"bot {bot!r} must be a Bot subclass or a 'module:Class' reference")
        if self.default_bot not in self.bot_refs():
            raise bad(f"default_bot {self.default_bot!r} is not one of its bots {sorted(self.bot_refs())}")
        if self.schema is not None:
            self._check_schema(bad)
        if isinstance(self.web_renderer, str) and not self.web_renderer.startswith("/"):
            raise bad(f"web_renderer {self.web_renderer!r}: a URL path starts with '/'")
        if isinstance(self.web_renderer, Path) and (self.web_renderer.suffix != ".js" or not self.web_renderer.is_file()):
            raise bad(f"web_renderer {self.web_renderer}: not a .js file")
        if not isinstance(self.quick_options, Mapping) or not all(isinstance(k, str) for k in self.quick_options):
            raise bad("quick_options must map option names to values")
        if self.tui_renderer is not None and not (isinstance(self.tui_renderer, str) and _REF.match(self.tui_renderer)):
            raise bad(f"tui_renderer {self.tui_renderer!r} is not a 'module:function' reference")
        if self.rules is not None and (not isinstance(self.rules, Path) or self.rules.suffix != ".md"
                                       or not self.rules.is_file()):
            raise bad(f"rules {self.rules}: not a .md file")

    def _check_schema(self, bad: Any) -> None:
        path = self.schema
        if not isinstance(path, Path) or not path.is_file():
            raise bad(f"schema {path}: no such file")
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise bad(f"schema {path}: not JSON ({exc})") from None
        expected = SCHEMA_BASE + path.name
        if not isinstance(document, dict) or document.get("$id") != expected:
            raise bad(f"schema {path}: its $id must be {expected!r} (so its references to server.json resolve)")


class _Registry:
    """The discovered specs (see the module docstring); one per process."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.specs: dict[str, GameSpec] | None = None
        self.generation = 0

    def discovered(self) -> dict[str, GameSpec]:
        specs = self.specs
        if specs is not None:  # the common case: no lock needed to read a settled registry
            return specs
        with self.lock:
            if self.specs is None:
                found_specs: dict[str, GameSpec] = {}
                for found in _builtin_specs():
                    _add(found_specs, found, strict=True)
                for source, load in _installed_sources():
                    _add_loaded(found_specs, source, load)
                self.specs = _ordered(found_specs)
                self.generation += 1
            return self.specs

    def replace(self, specs: dict[str, GameSpec] | None) -> None:
        with self.lock:
            self.specs = None if specs is None else _ordered(specs)
            self.generation += 1


_REGISTRY = _Registry()


def _ordered(specs: dict[str, GameSpec]) -> dict[str, GameSpec]:
    return {s.name: s for s in sorted(specs.values(), key=lambda s: (s.order, s.name))}


def _declared(module: ModuleType | Any, source: str) -> list[GameSpec]:
    """The specs a loaded module (its ``GAME``) or object declares."""
    found = getattr(module, "GAME", None) if isinstance(module, ModuleType) else module
    if found is None:
        raise RegistrationError(f"{source}: declares no GAME (a GameSpec)")
    items = list(found) if isinstance(found, (tuple, list)) else [found]
    if not items or not all(isinstance(s, GameSpec) for s in items):
        raise RegistrationError(f"{source}: GAME must be a GameSpec or a tuple of them, not {type(found).__name__}")
    return [s if s.source else _with_source(s, source) for s in items]


def _with_source(spec_: GameSpec, source: str) -> GameSpec:
    return replace(spec_, source=source)


def _add(specs: dict[str, GameSpec], found: GameSpec, strict: bool) -> None:
    """Check ``found`` and add it; a problem raises (``strict``) or is logged."""
    try:
        found.check()
        if found.name in specs:
            raise RegistrationError(f"game {found.name!r} of {found.source} is already registered by "
                                    f"{specs[found.name].source}")
    except RegistrationError as exc:
        if strict:
            raise
        log.error("game skipped: %s", exc)
        return
    specs[found.name] = found


def _add_loaded(specs: dict[str, GameSpec], source: str, load: Any) -> None:
    """Load one third-party source (an entry point or a module name) and add its games; log failures."""
    try:
        declared = _declared(load(), source)
    except Exception as exc:  # noqa: BLE001 (a third-party module may raise anything as it imports: skip it, say which)
        log.error("game module %s skipped: %s: %s", source, type(exc).__name__, exc)
        return
    for found in declared:
        _add(specs, found, strict=False)


def _builtin_specs() -> list[GameSpec]:
    """The specs of the modules of :data:`BUILTIN_PACKAGE`; any failure raises RegistrationError."""
    package = importlib.import_module(BUILTIN_PACKAGE)
    out: list[GameSpec] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        name = f"{BUILTIN_PACKAGE}.{info.name}"
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            raise RegistrationError(f"built-in game module {name} does not import: {exc!r}") from exc
        if getattr(module, "GAME", None) is not None:
            out += _declared(module, name)
    return out


def _installed_sources() -> list[tuple[str, Any]]:
    """(source name, loader) of every entry point of :data:`ENTRY_POINT_GROUP`,
    then of every module named in :data:`ENV`."""
    sources: list[tuple[str, Any]] = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        sources.append((f"entry point {ep.name} = {ep.value}", ep.load))
    for module in (m.strip() for m in os.environ.get(ENV, "").split(",")):
        if module:
            sources.append((module, lambda module=module: importlib.import_module(module)))
    return sources


# -- the public interface ----------------------------------------------------
def games() -> Mapping[str, GameSpec]:
    """Every registered game, name -> spec, in catalogue order (``order``, then name).
    Discovered on first call; raises RegistrationError when a built-in game is broken.
    Read-only: :func:`register` and :func:`unregister` change the registry."""
    return MappingProxyType(_REGISTRY.discovered())


def spec(name: str) -> GameSpec:
    """The spec of game ``name``; KeyError for a game that is not registered."""
    return games()[name]


def generation() -> int:
    """A number that changes whenever the registry does (caches key on it)."""
    games()
    return _REGISTRY.generation


def load_module(name: str) -> list[GameSpec]:
    """The specs the module ``name`` declares (imports it); RegistrationError when it
    declares none, ImportError when it does not import. Registers nothing."""
    return _declared(importlib.import_module(name), name)


def register(*specs: GameSpec) -> None:
    """Add ``specs`` to the registry; raises RegistrationError (nothing added) for a
    malformed spec or a name already registered."""
    with _REGISTRY.lock:
        current = dict(games())
        for found in specs:
            _add(current, found if found.source else _with_source(found, "register()"), strict=True)
        _REGISTRY.replace(current)


def unregister(*names: str) -> None:
    """Remove the games ``names`` (KeyError for one not registered)."""
    with _REGISTRY.lock:
        current = dict(games())
        for name in names:
            del current[name]
        _REGISTRY.replace(current)


@contextlib.contextmanager
def registered(*specs: GameSpec) -> Iterator[None]:
    """:func:`register` ``specs`` for the block, then :func:`unregister` them."""
    register(*specs)
    try:
        yield
    finally:
        unregister(*(s.name for s in specs))


def rediscover() -> Mapping[str, GameSpec]:
    """Forget the registry (games registered by code included) and discover it again
    (built-ins, entry points, :data:`ENV` as it is now)."""
    _REGISTRY.replace(None)
    return games()
