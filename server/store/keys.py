"""The Redis key names of one cluster (one key prefix), in one place.

Every key of one table (state, event stream, hands, hand counter, lease,
fencing epoch) carries the table id as its hash tag, ``P:{t_...}``, so a
Redis Cluster would keep them in one slot and a table's scripts would stay
single-slot with no format change; the other keys are cluster-wide
(``server/STORAGE.md``, "Redis key layout").

>>> k = Keys("cardhall")
>>> k.state("t_1"), k.events("t_1"), k.lease("t_1")
('cardhall:{t_1}', 'cardhall:{t_1}:events', 'cardhall:{t_1}:lease')
>>> k.channel("t_1"), k.inbox("n1")
('cardhall:{t_1}:ch', 'cardhall:inbox:n1')
"""

from __future__ import annotations


class Keys:
    """Key and channel names under ``prefix``."""

    __slots__ = ("prefix", "meta", "tables", "players", "quarantine", "lobby", "nodes", "seen")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        #: hash: format version and time; present while Redis holds cardhall's data
        self.meta = f"{prefix}:meta"
        #: set: ids of the tables to serve (open, or finished and not yet closed)
        self.tables = f"{prefix}:tables"
        #: hash: token hash -> msgpack [player id, name], as stored before players
        #: expired (read when a token is not found under :meth:`player`, and moved there)
        self.players = f"{prefix}:players"
        #: hash: table id -> why it was set aside
        self.quarantine = f"{prefix}:quarantine"
        #: hash: table id -> its public info as JSON (the cluster's lobby)
        self.lobby = f"{prefix}:lobby"
        #: hash: node id -> its heartbeat as JSON (address, load, tables)
        self.nodes = f"{prefix}:nodes"
        #: sorted set: node id -> when its heartbeat expires (Redis time, ms)
        self.seen = f"{prefix}:nodes:seen"

    def player(self, token_hash: str) -> str:
        """String: msgpack ``[player id, name]`` of the player whose token hashes to
        ``token_hash``; expires ``player_expiry`` after its last use."""
        return f"{self.prefix}:player:{token_hash}"

    def player_id(self, player: str) -> str:
        """String: the token hash of player ``player`` (so a node that sees the
        player seated can renew both keys); expires with :meth:`player`."""
        return f"{self.prefix}:player-id:{player}"

    def base(self, table: str) -> str:
        """The hash-tagged stem of ``table``'s keys."""
        return f"{self.prefix}:{{{table}}}"

    def state(self, table: str) -> str:
        """String: the table's state (msgpack)."""
        return self.base(table)

    def events(self, table: str) -> str:
        """Stream: the table's events, entry id ``{seq}-0``."""
        return self.base(table) + ":events"

    def hands(self, table: str) -> str:
        """List: the table's finished hands."""
        return self.base(table) + ":hands"

    def handseq(self, table: str) -> str:
        """String: the ``seq`` of the table's last stored hand."""
        return self.base(table) + ":handseq"

    def log(self, table: str) -> str:
        """The table's input log since its last full state (a list of packed entries)."""
        return self.base(table) + ":log"

    def logn(self, table: str) -> str:
        """The number of the last input log step stored (the log is written once per step, by this)."""
        return self.base(table) + ":logn"

    def lease(self, table: str) -> str:
        """String with a TTL: the owner's fencing token ``node|nonce|epoch``."""
        return self.base(table) + ":lease"

    def epoch(self, table: str) -> str:
        """String: the table's fencing epoch, incremented by every claim."""
        return self.base(table) + ":epoch"

    def channel(self, table: str) -> str:
        """Pub/sub channel: the table's committed events for other nodes, and owner changes."""
        return self.base(table) + ":ch"

    def inbox(self, node: str) -> str:
        """Pub/sub channel: messages to node ``node`` (inputs for its tables, frames for its clients)."""
        return f"{self.prefix}:inbox:{node}"

    def legacy_state(self, table: str) -> str:
        """The state key of a table stored before keys were hash-tagged (``P:t:{id}``)."""
        return f"{self.prefix}:t:{table}"
