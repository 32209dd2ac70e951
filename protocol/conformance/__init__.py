"""The conformance kit: machine-readable cases for other implementations of
the protocol (SPEC "Conformance kit"; ``README.md`` beside this file says how
to use each file).

* ``errors.json``: requests (after set-up steps) and the ``error`` frame each
  must get, on both subprotocols;
* ``codec.json``: frames as bytes on each subprotocol and the map each holds;
* ``g2.json``: test vectors of the G-2 generator;
* the recorded whole hands of ``cardhall.protocol.examples`` (``*.json``).

The Python tests read the same files; ``python -m
cardhall.protocol.conformance.run --server URL`` runs ``errors.json`` against
a server.

>>> sorted(load("errors")) == ["about", "cases", "not_covered", "steps", "version"]
True
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: the kit's files (package data), without ``.json``
FILES = ("errors", "codec", "g2")


def load(name: str) -> dict[str, Any]:
    """The kit's file ``name`` (one of :data:`FILES`), parsed. Raises
    ``ValueError`` for another name."""
    if name not in FILES:
        raise ValueError(f"no conformance file {name!r}; the kit has {', '.join(FILES)}")
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
