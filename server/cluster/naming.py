"""Node ids, scan timing and which node an orphaned table is meant for."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket

#: what a table id looks like ("t_" and hex digits): anything else is unknown without asking Redis
TABLE_ID = re.compile(r"t_[0-9a-f]{1,32}")


def default_node_id() -> str:
    """``<host>-<pid>-<4 hex>``: unique among running processes."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


def meant_for(table: str, nodes: list[str]) -> str:
    """The node of ``nodes`` an orphaned ``table`` is meant for (rendezvous
    hashing: every node computes the same, and a node's leaving moves only
    its own tables).

    >>> meant_for("t_1", ["a", "b"]) == meant_for("t_1", ["b", "a"])
    True
    """
    return max(nodes, key=lambda n: hashlib.blake2b(f"{table}/{n}".encode(), digest_size=8).digest())


def jittered(seconds: float) -> float:
    """``seconds`` times a factor in [0.5, 1.5) (from the OS's CSPRNG), so nodes do not scan in step."""
    return seconds * (0.5 + secrets.randbelow(1000) / 1000)
