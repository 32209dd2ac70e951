"""Compact events (protocol 1.8, SPEC "Compact events"): a table's step as one array.

A client that says ``hello`` with ``compact: true`` receives each step's events
of a table as an array instead of an ``events`` frame (1.7),
``[table, seq, ts, element, element, ...]``, where each element stands for one element of the ``events`` frame (an event
with its ``turn`` and ``legal``) and counts one ``seq``. An event is written by
position under its *layout*, the required fields of its schema definition
(``ev_<type>`` in the core or the game's schema document, SPEC "Schemas and
examples") in the order the schema lists them, the ``type`` left out:

* ``[index, v1, ..., vk]``: ``index`` is the event's entry in the server's
  list of layouts (``welcome.layouts``), ``v1 ... vk`` the values of its
  required fields in the layout's order; when the event has further fields
  (optional ones, such as the ``cards`` of a seat's own ``hole_cards``) they
  follow as one last element, a map: ``[index, v1, ..., vk, {name: value}]``;
* an event without a layout (its schema definition is a union, or its game has
  no schema document) is its map, as in an ``events`` frame;
* an event that carries a turn is ``[event, turn]`` or ``[event, turn, legal]``
  (``event`` written as above, ``legal`` the list of legal actions as in an
  ``event`` frame), where ``turn`` is ``[seat, id]`` (a bot's turn),
  ``[seat, id, true]`` (the table waits for the solo player's ``continue``) or
  ``[seat, id, clock, bank]`` (a person's, seconds; a whole number of seconds
  may be written as an integer).

So an element whose first entry is an integer is an event, one whose first
entry is a list or a map is an event with its turn, and a map is an event
written whole. :func:`compact` writes the array, :func:`expand` reads it back
into the ``events`` frame it stands for. Both are pure: the server encodes
each class of viewers' array once per step (``server/fanout.py``), a client
expands it (``clients/client.py``).

>>> table = Layouts([(None, "left", ["seat"]), ("g", "bet", ["seat", "amount"])])
>>> frame = {"type": "events", "table": "t_1", "seq": 4, "ts": 2.5, "events": [
...     {"event": {"type": "bet", "seat": 1, "amount": 20}},
...     {"event": {"type": "left", "seat": 2}, "turn": {"seat": 1, "id": 5, "clock": 30.0, "bank": 60.0}}]}
>>> packed = table.compact(frame, "g")
>>> packed
['t_1', 4, 2.5, [1, 1, 20], [[0, 2], [1, 5, 30, 60]]]
>>> expand(packed, table.entries())["events"][1]
{'event': {'type': 'left', 'seat': 2}, 'turn': {'seat': 1, 'id': 5, 'clock': 30, 'bank': 60}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: one layout: (the game it belongs to, None for the table's own events; the event type; its fields)
Entry = tuple[str | None, str, list[str]]


class Layouts:
    """The server's list of event layouts, ``entries`` in index order: each
    ``(game or None, type, fields)``. ``game`` None: the table's own events
    (SPEC "Events and ``seq``"), shared by every game. Raises ValueError when
    two entries name the same game and type."""

    __slots__ = ("_games", "_index", "_wire")

    def __init__(self, entries: Iterable[Entry]) -> None:
        self._index: dict[tuple[str | None, str], tuple[int, tuple[str, ...]]] = {}
        self._wire: list[list[Any]] = []
        for game, kind, fields in entries:
            if (game, kind) in self._index:
                raise ValueError(f"two layouts for {kind!r} of {game!r}")
            self._index[(game, kind)] = (len(self._wire), tuple(fields))
            self._wire.append([game, kind, list(fields)])
        #: game -> type -> (index, fields): the table's own layouts, then the game's over them
        self._games: dict[str | None, dict[str, tuple[int, tuple[str, ...]]]] = {}

    def _of(self, game: str | None) -> dict[str, tuple[int, tuple[str, ...]]]:
        """The layouts an event of a table of ``game`` is written under, by type."""
        found = self._games.get(game)
        if found is None:
            found = {kind: layout for (owner, kind), layout in self._index.items() if owner is None}
            found.update((kind, layout) for (owner, kind), layout in self._index.items()
                         if owner == game and game is not None)
            self._games[game] = found
        return found

    def entries(self) -> list[list[Any]]:
        """The layouts as ``welcome.layouts`` sends them: a list of ``[game,
        type, fields]`` (``game`` null for the table's own events), one list
        shared by every caller (not to be changed)."""
        return self._wire

    def find(self, game: str | None, kind: str) -> int | None:
        """The index an event of type ``kind`` at a table of ``game`` is
        written under (the game's layout, else the table's own), or None
        when it has none (it is written as a map)."""
        found = (self._games.get(game) or self._of(game)).get(kind)
        return None if found is None else found[0]

    def event(self, game: str | None, event: Mapping[str, Any]) -> Any:
        """``event`` (an event map with ``type``) written under its layout in
        ``game`` (or the table's own layout), or the map itself when neither
        has one (an event lacking one of its layout's fields too: it is sent
        as it is, for the schema check to name it)."""
        found = (self._games.get(game) or self._of(game)).get(event["type"])
        if found is None:
            return event
        index, fields = found
        try:
            out: list[Any] = [index, *[event[name] for name in fields]]
        except KeyError:
            return event
        if len(event) != len(fields) + 1:  # fields beyond the layout's (and "type"): the last map
            out.append({name: value for name, value in event.items() if name != "type" and name not in fields})
        return out

    def element(self, game: str | None, event: Mapping[str, Any], turn: Mapping[str, Any] | None = None,
                legal: list[Any] | None = None) -> Any:
        """One element of a compact array: ``event`` (of a table of ``game``)
        written by :meth:`event`, with its ``turn`` and ``legal`` when it
        carries a turn (``legal`` only with a turn, as in an ``events`` frame)."""
        written = self.event(game, event)
        if turn is None:
            return written
        if legal is None:
            return [written, compact_turn(turn)]
        return [written, compact_turn(turn), legal]

    def compact(self, frame: Mapping[str, Any], game: str | None) -> list[Any]:
        """The compact array of ``frame``, an ``events`` frame of a table of
        ``game`` (module docstring)."""
        element = self.element
        return [frame["table"], frame["seq"], frame["ts"],
                *[element(game, item["event"], item.get("turn"), item.get("legal")) for item in frame["events"]]]


def _whole(seconds: float) -> float | int:
    return int(seconds) if seconds == int(seconds) else seconds


def compact_turn(turn: Mapping[str, Any]) -> list[Any]:
    """A ``turn`` map as its compact array: ``[seat, id]``, ``[seat, id,
    true]`` or ``[seat, id, clock, bank]``."""
    out = [turn["seat"], turn["id"]]
    if turn.get("continue"):
        out.append(True)
    elif "clock" in turn:
        out.extend((_whole(turn["clock"]), _whole(turn["bank"])))
    return out


def expand_turn(turn: Sequence[Any]) -> dict[str, Any]:
    """The ``turn`` map a compact turn stands for. Raises ValueError on an
    array of another length."""
    if len(turn) == 2:
        return {"seat": turn[0], "id": turn[1]}
    if len(turn) == 3 and turn[2] is True:
        return {"seat": turn[0], "id": turn[1], "continue": True}
    if len(turn) == 4:
        return {"seat": turn[0], "id": turn[1], "clock": turn[2], "bank": turn[3]}
    raise ValueError(f"a compact turn is [seat, id], [seat, id, true] or [seat, id, clock, bank], not {turn!r}")


def expand_event(written: Any, layouts: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The event map ``written`` stands for, under ``layouts``
    (``welcome.layouts``). Raises ValueError when it is neither a map nor an
    array that fits its layout."""
    if isinstance(written, dict):
        return written
    if not isinstance(written, list) or not written or not isinstance(written[0], int) or isinstance(written[0], bool):
        raise ValueError(f"a compact event is a map or [index, values...], not {written!r}")
    index = written[0]
    if not 0 <= index < len(layouts):
        raise ValueError(f"no layout {index} (the server sent {len(layouts)})")
    _, kind, fields = layouts[index]
    event: dict[str, Any] = {"type": kind}
    event.update(zip(fields, written[1:]))
    rest = len(written) - 1 - len(fields)
    if rest == 1 and isinstance(written[-1], dict):
        event.update(written[-1])
    elif rest != 0:
        raise ValueError(f"event {kind!r} has {len(written) - 1} values for {len(fields)} fields")
    return event


def expand(message: Sequence[Any], layouts: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The ``events`` frame (1.7) a compact array stands for (the inverse of
    :meth:`Layouts.compact`), under ``layouts`` (``welcome.layouts``). Raises
    ValueError on an array that is not a compact events frame."""
    if len(message) < 4 or not isinstance(message[0], str) or not isinstance(message[1], int):
        raise ValueError("a compact events frame is [table, seq, ts, element, ...] with at least one element")
    items: list[dict[str, Any]] = []
    for element in message[3:]:
        if isinstance(element, list) and element and isinstance(element[0], (list, dict)):
            if len(element) not in (2, 3):
                raise ValueError("an event with its turn is [event, turn] or [event, turn, legal]")
            item: dict[str, Any] = {"event": expand_event(element[0], layouts), "turn": expand_turn(element[1])}
            if len(element) == 3:
                item["legal"] = element[2]
            items.append(item)
        else:
            items.append({"event": expand_event(element, layouts)})
    return {"type": "events", "table": message[0], "seq": message[1], "ts": message[2], "events": items}


def layouts_from(documents: Mapping[str, Mapping[str, Any]], games: Mapping[str, str]) -> Layouts:
    """The layouts the schema ``documents`` (file name -> document) give: the
    table's own events from ``server.json``, then each game's (``games``:
    game -> its document's file name, in registration order). An event has a
    layout when its definition ``ev_<type>`` lists its ``properties`` directly
    (not through ``allOf``/``oneOf``): its required fields but ``type``, in the
    order of ``properties``."""
    entries: list[Entry] = []

    def add(game: str | None, document: Mapping[str, Any]) -> None:
        for name, definition in document.get("$defs", {}).items():
            if not name.startswith("ev_") or not isinstance(definition, dict):
                continue
            properties = definition.get("properties")
            if not isinstance(properties, dict):
                continue
            kind = properties.get("type", {}).get("const")
            if not isinstance(kind, str) or any(key in definition for key in ("allOf", "oneOf", "anyOf")):
                continue
            required = set(definition.get("required", ()))
            entries.append((game, kind, [field for field in properties if field in required and field != "type"]))

    add(None, documents["server.json"])
    for game, filename in games.items():
        add(game, documents[filename])
    return Layouts(entries)
