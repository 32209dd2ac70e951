"""One table: a sans-I/O state machine (the rules) under a thin asyncio actor.

The machine (:class:`~cardhall.server.table.machine.TableMachine`) takes typed
inputs and the time as arguments and produces outputs: event records to
commit then publish, replies, join answers, a timer to arm, finished hands,
status notices. It never awaits, reads a clock, draws from the OS or touches
a socket; given the same inputs, times and entropy it does the same thing.
The actor (:mod:`~cardhall.server.table.actor`) is the only part that awaits:
it feeds the mailbox's inputs to the machine, commits, publishes, arms the
timer. Because the machine is deterministic, its checkpoints between two full
states are its steps (:mod:`.log`), and recovery replays them (:mod:`.replay`).

=================  ===========================================================================
``inputs``         the inputs (frozen dataclasses) and ``Now``, the time of a step
``outputs``        what a step asks its owner to do: records, replies, joins, timer, notices
``records``        ``EventRecord`` and the one gate for legal actions
``subscribers``    subscriber key -> viewer and player id, presence per seat
``occupant``       ``Occupant``: who sits in a seat (G-1, G-5), a client seed (G-2)
``clock``          ``TurnClock``/``PausedClock``: action clock and time bank (G-3)
``core``           ``TableCore``: the table's state, ``emit`` and the step's bookkeeping
``views``          ``info``, ``lobby_entry``, ``turn_public``, ``snapshot`` (frames from ``protocol.frames``)
``bots``           ``SeatView`` and a bot's think time and move (NL-5)
``match``          a match's deal and end: seeds, reveal, next commitment (G-2), next button (G-7)
``turns``          turns, clocks, bots, auto play, pacing and ``continue`` (G-3, G-4)
``lifecycle``      start, rematch, pause/resume, close (G-7, G-8, G-9)
``seating``        join, leave, disconnect, presence (G-5)
``naming``         a player renamed: its seat's name, the ``renamed`` event
``requests``       ``act``: field checks, table controls, game actions
``admission``      who the host keeps out (bans, kicks) and whether the owner is here
``host_controls``  the owner's ``close``, ``kick``, ``ban``, ``transfer``; an absent owner's table passing on
``privacy``        ``Privacy``: a private table's invite, password record, players let in, seat requests
``access``         who may join a private table; requests for a seat and their lapse (SPEC "Private tables")
``approval``       the owner's ``approve`` and ``deny`` of a request for a seat
``log``            the input log: each step's inputs, time, server seeds and bot moves as data
``state``          ``to_data``/``from_data`` (the stored format, FORMAT_VERSION 3) and the replay context
``machine``        ``TableMachine``: dispatch, fault containment, stalls, one log entry per step
``replay``         recovery by replay: a full state plus the log after it gives the state the table had
``host``           ``TableMetrics`` and ``RelayedPeer``: what the actor counts and reaches through its host
``actor``          ``TableActor``: the asyncio owner (mailbox, commit, publish, timer), ``TableHost``
=================  ===========================================================================
"""
