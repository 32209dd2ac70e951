"""Protocol v1 JSON Schemas (2020-12) and a validator of frames.

The documents in this folder, resolved against each other by their ``$id``
(``https://cardhall.invalid/schemas/v1/<file>``, an identifier, not a place
to fetch from):

* the core, :data:`CORE_DOCUMENTS`, which names no game: ``server.json``
  (every server frame, ``welcome`` ... ``batch``, 1.7's ``events`` and 1.8's
  ``compact_events`` array, ``info``, ``turn``, the table's own events
  ``seated``, ``match_started`` ..., and the body of
  ``GET /api/games``, ``catalogue``) and ``client.json`` (every client message,
  table controls);
* one document per game, found through the game's registration
  (:attr:`cardhall.engine.plugins.GameSpec.schema`: the built-in games'
  ``holdem.json`` (both Hold'em games), ``alamo.json``, ``loco_poker.json``,
  ``avalanche.json`` are in this folder; another game's lies wherever its
  registration says): ``action``, ``legal_action``, each event ``ev_<type>``
  (``ev_match_started`` narrows the table's to the game's options),
  ``game_event`` / ``event`` (unions), ``view`` (the snapshot ``state``),
  ``result``, ``match_options`` (``match_started.options``, built from the
  engine's ``options_spec``), and ``event_frame`` / ``event_item`` /
  ``events_frame`` / ``snapshot`` / ``act`` narrowed to that game. Its ``$id`` is :data:`BASE` + its file name.

:func:`documents` reads the core and the registered games' documents, again
whenever the registry changes (:func:`cardhall.engine.plugins.generation`).

:class:`FrameValidator` checks frames against them. It learns each table's game
from ``table_created`` and ``snapshot`` frames, then checks that table's events
(each element of an ``events`` frame as the ``event`` frame it stands for),
legal actions, states and actions against the game's document (a game
registered without one: against the generic shapes of the core). It learns the
layouts of compact events from the ``welcome`` (1.8) and checks a compact array
as the ``events`` frame it stands for (:func:`cardhall.protocol.compact.expand`),
after the array's own shape and the rules of the encoding. For speed it
picks the definition by ``type`` instead of trying every branch of a union; the
unions themselves are checked by ``tests/protocol`` against recorded examples.

>>> v = FrameValidator()
>>> v.check_server({"type": "pong", "re": 1})
>>> v.check_server({"type": "pong"})
Traceback (most recent call last):
...
cardhall.protocol.schemas.SchemaViolation: pong: 're' is a required property (at $)
>>> v.client_errors({"type": "join", "table": "t_1", "role": "king"})
["'king' is not one of ['player', 'spectator'] (at $.role)"]
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from cardhall.engine import plugins
from cardhall.protocol.compact import Layouts, expand
from cardhall.protocol.frames import expand_events

SCHEMA_DIR = Path(__file__).resolve().parent
BASE = plugins.SCHEMA_BASE
#: the documents that name no game
CORE_DOCUMENTS = ("server.json", "client.json")

Frame = dict[str, Any]


class SchemaViolation(Exception):
    """A frame that does not match the protocol's schemas."""


def game_documents() -> dict[str, str]:
    """Registered game name -> the file name of its schema document (games
    registered without one are absent). Raises ValueError when two games
    name different files of the same name, or a file of a core document's name."""
    return dict(_game_documents(plugins.generation())[0])


def game_document(game: str) -> str | None:
    """The file name of ``game``'s schema document, or None (an unknown game,
    or one registered without a document)."""
    return _game_documents(plugins.generation())[0].get(game)


class _GameDocumentView(Mapping[str, str]):
    """:func:`game_documents` as a live read-only mapping."""

    def __getitem__(self, game: str) -> str:
        found = game_document(game)
        if found is None:
            raise KeyError(game)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(game_documents())

    def __len__(self) -> int:
        return len(game_documents())


#: protocol game name -> the schema document of its actions, events and view (live)
GAME_DOCUMENT: Mapping[str, str] = _GameDocumentView()


@cache
def _game_documents(generation: int) -> tuple[dict[str, str], dict[str, Path]]:
    """(game -> file name, file name -> path) for the registry at ``generation``."""
    names: dict[str, str] = {}
    paths: dict[str, Path] = {name: SCHEMA_DIR / name for name in CORE_DOCUMENTS}
    for game, spec in plugins.games().items():
        if spec.schema is None:
            continue
        name = spec.schema.name
        known = paths.get(name)
        if known is not None and known.resolve() != spec.schema.resolve():
            raise ValueError(f"game {game!r}: its schema document {spec.schema} has the name of {known}")
        paths[name] = spec.schema
        names[game] = name
    return names, paths


def documents() -> dict[str, dict[str, Any]]:
    """Every schema document by file name: the core and each registered game's
    (parsed once per state of the registry)."""
    return _documents(plugins.generation())


@cache
def _documents(generation: int) -> dict[str, dict[str, Any]]:
    return {name: json.loads(path.read_text()) for name, path in _game_documents(generation)[1].items()}


def registry() -> Registry:
    """A ``referencing`` registry holding every document under its ``$id``."""
    return _registry(plugins.generation())


@cache
def _registry(generation: int) -> Registry:
    return Registry().with_resources((BASE + name, Resource.from_contents(doc))
                                     for name, doc in _documents(generation).items())


def compiled(ref: str) -> Draft202012Validator:
    """A validator for ``ref`` (``"<file>#/$defs/<name>"``, relative to :data:`BASE`).

    Its schema is :func:`inlined`: every ``$ref`` replaced by its target once,
    which validates the same instances several times faster than resolving
    references through the registry on every frame."""
    return _compiled(ref, plugins.generation())


@cache
def _compiled(ref: str, generation: int) -> Draft202012Validator:
    schema = _inlined(ref, generation)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


_DATA_KEYWORDS = {"const", "enum", "description", "$comment", "title", "examples", "default"}


def inlined(ref: str) -> Any:
    """The definition ``ref`` with every ``$ref`` in it replaced by its target
    (shared subtrees, no copies); a ``$ref`` with sibling keywords becomes an
    ``allOf`` with them. The documents hold no recursive definitions."""
    return _inlined(ref, plugins.generation())


@cache
def _inlined(ref: str, generation: int) -> Any:
    document, _, pointer = ref.partition("#")
    return _inline(registry().resolver(BASE + document).lookup("#" + pointer).contents, document, (ref,))


def _inline(node: Any, document: str, stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(v, document, stack) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in _DATA_KEYWORDS else _inline(v, document, stack))
           for k, v in node.items() if k not in ("$ref", "$defs", "$id", "$schema")}
    target = node.get("$ref")
    if target is None:
        return out
    ref = target if "#" in target else target + "#"
    if ref.startswith("#"):
        ref = document + ref
    if ref in stack:
        raise ValueError(f"recursive schema reference {ref}")
    doc, _, pointer = ref.partition("#")
    resolved = _inline(registry().resolver(BASE + doc).lookup("#" + pointer).contents, doc, stack + (ref,))
    return {"allOf": [resolved], **out} if out else resolved


def has_def(document: str, name: str) -> bool:
    """True when ``document`` defines ``$defs/name``."""
    return name in documents()[document]["$defs"]


def errors(ref: str, instance: Any) -> list[str]:
    """The reasons ``instance`` does not match ``ref`` (empty when it does); the most relevant first."""
    found = list(compiled(ref).iter_errors(instance))
    if not found:
        return []
    best = best_match(found)
    ordered = [best] + [e for e in found if e is not best]
    return [f"{e.message} (at {e.json_path})" for e in ordered]


class FrameValidator:
    """Checks frames against the schemas; used by :mod:`cardhall.clients.client`.

    ``check_server(frame)`` raises :class:`SchemaViolation` for a server frame
    that does not match (and records it in :attr:`failures`);
    ``client_errors(message)`` returns what is wrong with a client message (a
    server must answer such a message with an ``error``). :attr:`checked`
    counts the frames checked per kind (``"event:<game>:<type>"`` ...).
    :attr:`layouts` holds the ``layouts`` of the last valid ``welcome`` (None
    until a welcome with ``compact: true``, and after one without).
    """

    def __init__(self) -> None:
        self.games: dict[str, str] = {}
        self.layouts: list[list[Any]] | None = None
        #: :attr:`layouts` as the encoder holds them (which layout each event is written under)
        self._layouts = Layouts(())
        self.failures: list[str] = []
        self.checked: Counter[str] = Counter()

    # -- server frames ------------------------------------------------------
    def check_server(self, frame: Mapping[str, Any] | list[Any]) -> None:
        """Validate one server frame (a ``batch`` and every frame in it; a
        compact events array, 1.8)."""
        problems = self.server_errors(frame)
        if problems:
            message = f"{frame.get('type') if isinstance(frame, Mapping) else 'compact events'}: {problems[0]}"
            self.failures.append(f"{message}\n  frame: {_short(frame)}")
            raise SchemaViolation(message)

    def server_errors(self, frame: Mapping[str, Any] | list[Any]) -> list[str]:
        """What is wrong with a server frame (empty when nothing is)."""
        if isinstance(frame, list):
            return self._compact_errors(frame)
        kind = frame.get("type") if isinstance(frame, Mapping) else None
        if kind == "batch":
            inner_frames = frame.get("frames")
            if set(frame) != {"type", "frames"} or not isinstance(inner_frames, list) or not inner_frames:
                return ["a batch holds only type and a non-empty list of frames"]
            problems: list[str] = []
            for inner in inner_frames:
                if isinstance(inner, Mapping) and inner.get("type") == "batch":
                    problems.append("a batch inside a batch")
                else:
                    problems += self.server_errors(inner)
            self.checked["batch"] += 1
            return problems
        if kind == "table_created":
            self._learn(frame.get("table"), (frame.get("info") or {}).get("game"))
        elif kind == "snapshot":
            self._learn(frame.get("table"), (frame.get("info") or {}).get("game"))
            game = self.games.get(frame.get("table"))  # type: ignore[arg-type]
            if game is not None:
                self.checked[f"snapshot:{game}"] += 1
                doc = game_document(game)
                return errors(f"{doc}#/$defs/snapshot" if doc else "server.json#/$defs/snapshot", frame)
        elif kind == "event":
            return self._event_errors(frame)
        elif kind == "events":
            return self._events_errors(frame)
        if kind not in ("welcome", "table_created", "snapshot", "ok", "error", "pong"):
            return [f"{kind!r} is not a server frame type"]
        self.checked[str(kind)] += 1
        problems = errors(f"server.json#/$defs/{kind}", frame)
        if kind == "welcome" and not problems:
            try:
                self._layouts = Layouts((game, kind, fields) for game, kind, fields in frame.get("layouts") or ())
            except ValueError as exc:  # two layouts of one type and game
                return [str(exc)]
            self.layouts = frame.get("layouts")
        return problems

    def _learn(self, table: Any, game: Any) -> None:
        """Remember ``table``'s game: its document checks the table's frames (a
        game not registered here has none: the core's generic shapes do)."""
        if isinstance(table, str) and isinstance(game, str):
            self.games[table] = game

    def _event_errors(self, frame: Mapping[str, Any]) -> list[str]:
        problems = errors("server.json#/$defs/event_frame_base", frame)
        if problems:
            return problems
        event = frame["event"]
        kind = event["type"]
        game = self.games.get(frame["table"])
        doc = game_document(game) if game is not None else None
        name = f"ev_{kind}"
        candidates = self._event_definitions(game, doc, name)
        if not candidates:
            return [f"event type {kind!r} is not in the schemas" + (f" of {game}" if game else "")]
        found: list[str] = []
        for ref in candidates:
            problems = errors(ref, event)
            if not problems:
                break
            found += problems
        else:
            return found
        if doc is not None and kind == "match_started" and has_def(doc, f"match_options_{game}"):
            problems = errors(f"{doc}#/$defs/match_options_{game}", event.get("options"))
            if problems:
                return [f"match_started.options of {game}: {p}" for p in problems]
        self.checked[f"event:{game or '?'}:{kind}"] += 1
        legal = frame.get("legal")
        if legal is not None:
            if game is not None:
                refs = [f"{doc}#/$defs/legal_action" if doc else "server.json#/$defs/legal_action_any"]
            else:
                refs = [f"{d}#/$defs/legal_action" for d in sorted(set(game_documents().values()))]
            for item in legal:
                if all(errors(ref, item) for ref in refs):
                    return [f"legal action {item!r} matches no legal_action of {game or 'any game'}"] + \
                        errors(refs[0], item)
        return []

    def _events_errors(self, frame: Mapping[str, Any]) -> list[str]:
        """An ``events`` frame (1.7): its envelope and elements by the core's
        shapes (no ``seq``, ``table``, ``ts`` or ``type`` in an element), then
        each element as the ``event`` frame it stands for (``seq`` + its index,
        the frame's ``ts``), by the table's game like any event frame."""
        problems = errors("server.json#/$defs/events_frame_base", frame)
        if problems:
            return problems
        for i, event in enumerate(expand_events(dict(frame))):
            problems = self._event_errors(event)
            if problems:
                return [f"events[{i}]: {p}" for p in problems]
        self.checked["events"] += 1
        return []

    def _compact_errors(self, frame: list[Any]) -> list[str]:
        """A compact events array (1.8, SPEC "Compact events"): its shape
        (``server.json``'s ``compact_events``), then under the welcome's
        layouts: each event written under a layout of the table's game (or the
        table's own), a trailing map holding only fields its layout lacks, an
        event written as a map only when it has no layout; then the ``events``
        frame it expands to, as :meth:`_events_errors` checks one."""
        problems = errors("server.json#/$defs/compact_events", frame)
        if problems:
            return problems
        layouts = self.layouts
        if layouts is None:
            return ["a compact events array before a welcome with layouts"]
        try:
            expanded = expand(frame, layouts)
        except ValueError as exc:
            return [str(exc)]
        game = self.games.get(frame[0])
        for i, element in enumerate(frame[3:]):
            written = element[0] if isinstance(element, list) and isinstance(element[0], (list, dict)) else element
            problem = self._layout_problem(written, game)
            if problem is not None:
                return [f"[{3 + i}]: {problem}"]
        problems = self._events_errors(expanded)
        if problems:
            return problems
        self.checked["compact"] += 1
        return []

    def _layout_problem(self, written: list[Any] | dict[str, Any], game: str | None) -> str | None:
        """What breaks the rules of the encoding in ``written``, one event of a
        compact array that :func:`cardhall.protocol.compact.expand` read under
        :attr:`layouts`, in a table of ``game`` (None: not known yet), or None:
        an event is written under its game's layout of its type, else the
        table's; as a map only when neither exists (or it lacks one of the
        layout's fields: the schema check names it)."""
        layouts = self.layouts or []
        if isinstance(written, dict):
            if game is None:
                return None
            kind = written["type"]
            found = self._layouts.find(game, kind)
            if found is not None and set(layouts[found][2]) <= set(written):
                return f"event {kind!r} written as a map, though it has the layout {found}"
            return None
        owner, kind, fields = layouts[written[0]]
        if game is not None and (found := self._layouts.find(game, kind)) != written[0]:
            return (f"the layout {written[0]} is {kind!r} of {owner or 'the table'}, where a table of {game} "
                    f"writes {kind!r} under {found}")
        if len(written) == len(fields) + 2:
            rest = written[-1]
            if not rest or "type" in rest or set(fields) & set(rest):
                return f"event {kind!r}: its last map holds fields its layout lacks, one or more, not {rest!r}"
        return None

    @staticmethod
    def _event_definitions(game: str | None, doc: str | None, name: str) -> list[str]:
        """The definitions an event named ``name`` (``ev_<type>``) may match: the
        game document's own when it has one (it narrows the table's), else the
        core's table event; a game without a document: any game event. An event
        of a table whose game is not known yet may be any game's."""
        if game is not None:
            if doc is not None and has_def(doc, name):
                return [f"{doc}#/$defs/{name}"]
            if has_def("server.json", name):
                return [f"server.json#/$defs/{name}"]
            return [] if doc is not None else ["server.json#/$defs/game_event_any"]
        candidates = [f"{d}#/$defs/{name}" for d in sorted(set(game_documents().values())) if has_def(d, name)]
        if has_def("server.json", name):
            candidates.append(f"server.json#/$defs/{name}")
        return candidates

    # -- HTTP bodies --------------------------------------------------------
    def check_catalogue(self, body: Any) -> None:
        """Validate the body of ``GET /api/games`` (``server.json``'s
        ``catalogue``); raises :class:`SchemaViolation` (recorded in
        :attr:`failures`) when it does not match."""
        problems = errors("server.json#/$defs/catalogue", body)
        self.checked["catalogue"] += 1
        if problems:
            message = f"GET /api/games: {problems[0]}"
            self.failures.append(message)
            raise SchemaViolation(message)

    # -- client messages -----------------------------------------------------
    def client_errors(self, message: Mapping[str, Any]) -> list[str]:
        """What is wrong with a client message (empty when nothing is)."""
        kind = message.get("type") if isinstance(message, Mapping) else None
        if not isinstance(kind, str) or not has_def("client.json", kind) or kind in ("id", "action", "control", "client_message"):
            return [f"{kind!r} is not a client message type"]
        self.checked[f"client:{kind}"] += 1
        if kind == "act":
            table = message.get("table")
            game = self.games.get(table) if isinstance(table, str) else None
            doc = game_document(game) if game is not None else None
            if doc is not None:
                return errors(f"{doc}#/$defs/act", message)
        return errors(f"client.json#/$defs/{kind}", message)


def _short(frame: Any, limit: int = 600) -> str:
    text = repr(frame)
    return text if len(text) <= limit else text[:limit] + "..."
