"""The uvicorn internals that ``server/ws_protocol.py`` and
``server/http_protocol.py`` rely on, pinned: a uvicorn release that changes
any of them fails here, naming what changed.

``CardhallWebSocketProtocol`` subclasses ``WebSocketsSansIOProtocol``
(``uvicorn.protocols.websockets.websockets_sansio_impl``) and writes websocket
frames to its transport by hand; ``CardhallHttpProtocol`` subclasses
``HttpToolsProtocol`` (``uvicorn.protocols.http.httptools_impl``). Neither base
is public API, so pyproject.toml bounds uvicorn below the next minor release
after the newest one reviewed here, and this test checks, for the installed
uvicorn:

* each subclass's direct base is that class, and the installed version is
  inside the pyproject bound, whose ends are the oldest and (next minor after)
  the newest version in :data:`DIGESTS`;
* every method a subclass overrides exists on the base with the same
  parameters (names, kinds, defaults: uvicorn calls them), and every
  ``super().name(...)`` it makes is one of those;
* every attribute of the base a subclass reads or writes (found in the
  subclass's source, so the lists below cannot fall behind it) is declared in
  :data:`RELIANCE`, is still assigned by the base method named there, and
  those set by ``__init__`` are on a protocol built with a real
  ``uvicorn.Config`` and ``ServerState``; no name a subclass adds exists on
  its base (it would shadow uvicorn's);
* the SHA-256 digest of the source of every base method a subclass overrides
  or depends on (:data:`RELIANCE`, plus every base method that reads an
  attribute the subclass writes) is the one recorded in :data:`DIGESTS`.
* with ``ws_per_message_deflate`` the websockets ``ServerProtocol`` uvicorn
  builds offers our ``DEFLATE`` in place of uvicorn's factory, and websockets
  negotiates and compresses the way ``send_now`` relies on.

:data:`DIGESTS` is cumulative: the digests expected of version V are those of
the newest entry at or below V for each method, so an entry holds only what
changed (an empty entry: a release reviewed with nothing changed). To accept a
new uvicorn release: read the methods the failure names in the new source,
review the subclass against them (and run the server tests), then run
``.venv/bin/python -m tests.server.test_uvicorn_internals``, paste the entry it
prints into :data:`DIGESTS`, and move the bound in pyproject.toml.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import inspect
import sys
import textwrap
import tomllib
import zlib
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from packaging.requirements import Requirement
from packaging.version import Version
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.extensions.permessage_deflate import PerMessageDeflate

from cardhall.server.http_protocol import CardhallHttpProtocol
from cardhall.server.ws_protocol import DEFLATE, CardhallWebSocketProtocol

ROOT = Path(__file__).resolve().parents[2]

#: what each subclass relies on in its base (beyond the methods it overrides, found by reading it):
#: ``depends``: base methods it does not override whose behaviour it relies on, and why;
#: ``attributes``: base attributes it reads or writes, and the base methods that assign each (comma-separated)
RELIANCE: dict[type, dict[str, dict[str, str]]] = {
    CardhallWebSocketProtocol: {
        "depends": {
            "connection_made": "assigns transport (CardhallHttpProtocol's upgrade calls it before data_received)",
            "pause_writing": "clears writable: send_now and handle_ping write nothing while it is clear",
            "resume_writing": "sets writable again",
            "handle_events": "calls handle_connect(event), handle_ping() (no argument) and handle_pong(event)",
            "handle_handshake_exception": "(0.55) answers an unreadable upgrade request; data_received covers the "
                                          "releases without it",
            "handle_text": "sets frames and curr_msg_data_type, then for a final frame calls "
                           "send_receive_event_to_app (the receiver's way in)",
            "handle_bytes": "the same for a binary message",
            "handle_cont": "appends a continuation to frames and calls send_receive_event_to_app after the last",
            "receive": "takes the queue's messages and resumes reading once the queue is empty, so a queued "
                       "message and the handled ones after it keep their order",
        },
        "attributes": {
            "transport": "connection_made", "conn": "__init__", "writable": "__init__",
            "handshake_initiated": "__init__", "handshake_complete": "__init__", "close_sent": "__init__",
            "disconnected": "__init__, connection_lost", "scope": "handle_connect", "request": "handle_connect",
            "response": "handle_connect", "frames": "__init__, handle_text, handle_bytes, send_receive_event_to_app",
            "curr_msg_data_type": "__init__, handle_text, handle_bytes", "queue": "__init__",
        },
    },
    CardhallHttpProtocol: {
        "depends": {
            "_should_upgrade": "decides that data_received hands the connection to the websocket protocol",
            "send_400_response": "data_received's answer to a malformed head: closes the transport, and "
                                 "CardhallHttpProtocol.data_received then stops feeding the parser",
            "eof_received": "returns None, so asyncio closes the transport once the client closes its side "
                            "(answer_early's linger)",
            "_unset_keepalive_if_required": "idle kept-alive connections are closed by uvicorn's keep-alive "
                                            "timer, and a request's deadline starts at on_message_begin",
            "on_response_complete": "arms that keep-alive timer",
            "timeout_keep_alive_handler": "closes the idle connection",
        },
        "attributes": {
            "transport": "connection_made", "client": "connection_made", "loop": "__init__",
            "cycle": "__init__, on_headers_complete",
        },
    },
}

#: methods of other uvicorn classes the subclasses depend on: CardhallHttpProtocol.answer_early reads
#: ``self.cycle.response_complete`` (False until the response is sent whole)
OTHER_DEPENDS: dict[type, dict[str, str]] = {
    RequestResponseCycle: {
        "__init__": "assigns response_complete = False",
        "send": "sets response_complete once the response's last body message is written",
    },
}

#: uvicorn version -> {"Class.method": SHA-256 of its dedented source} for what changed at that version;
#: each release from the lower bound on was read against the subclasses (the comments say what changed)
DIGESTS: dict[str, dict[str, str]] = {
    "0.52.1": {
        "HttpToolsProtocol.__init__": "264f2f06759670d42930457f7a696640a575fad06bdb0933901b2932347f800c",
        "HttpToolsProtocol._should_upgrade": "ae8ade68aa39944a56a9a96da81af82f8f0953c25a13013f4e6416014751832f",
        "HttpToolsProtocol._unset_keepalive_if_required": "58f4ffce604d92dde3e339f2e7b400f8d8e12e790fd6802ca7b83249682fa6f4",
        "HttpToolsProtocol.connection_lost": "21bb5222b35990e710aa5c2e96639fb2fa39cae9019c44faec436dc5e004f88c",
        "HttpToolsProtocol.connection_made": "ba1915817ccf6c1b7d6d9982ca74b6fb9e43eebbd3f588fff1e1f8f17af5e161",
        "HttpToolsProtocol.data_received": "02c2572f1df559070eba7f206a3f7e251782f5af4aaae194fc1ffb67f24c3873",
        "HttpToolsProtocol.eof_received": "cf1db74cbefe2709f43c056f72da7f6c0f3da0aad39dc5c0bd826294404217ba",
        "HttpToolsProtocol.handle_websocket_upgrade": "f5384e926c8c43c601d0131c64360e2b067b789e2772f7f344414c6a44bf772f",
        "HttpToolsProtocol.on_headers_complete": "de3f0af205739393cc2b8cd7853b962ec0c1cdc268241fc6943e7fd3c9f8ae31",
        "HttpToolsProtocol.on_message_begin": "0efab6f9456c4987cb366d90c1d3f4a36f28a271cf9b5b2d276c631d387e55ea",
        "HttpToolsProtocol.on_message_complete": "377f9122ee6f3ab87995f6baba01667ec1e2b22543a8e09e83aa334973018f10",
        "HttpToolsProtocol.on_response_complete": "5684fd801d0683ac20b9144e8eed8327e445236d5c1d16a02253dfb3a35b9a75",
        "HttpToolsProtocol.send_400_response": "0b0d3ace8d2637888e890086561ad9c33f34dd9d90d20835484b2a292006236c",
        "HttpToolsProtocol.timeout_keep_alive_handler": "2127de00e7f6b11823cf2987a8859de912df614f2f704145e532a6e02d931e62",
        "RequestResponseCycle.__init__": "459bebd3022b64c243da27ec60f30c48fd6599087c34a7b33bf2655d4d704aa8",
        "RequestResponseCycle.send": "0bd12486cef7d1fde8bc2753383d1a42c1bc9a1f01b81e1f4cfedc98893f0efa",
        "WebSocketsSansIOProtocol.__init__": "cdad078596a7c53ac85817cf5341441946047dd910a7280f030a683b9ddaf37f",
        "WebSocketsSansIOProtocol.connection_lost": "44a325646ee17ef373ec41c2c6cca2819f9d827e04dc4003e6a0a3e39ca8d00a",
        "WebSocketsSansIOProtocol.connection_made": "453e89b605d1ec7b583c35907593ebac2b76fc1afb37a9fbacb7169fcb0234a5",
        "WebSocketsSansIOProtocol.data_received": "0d468d6299c957bbd613b286090b4b12634588012f382b4afbd460dae7d30654",
        "WebSocketsSansIOProtocol.handle_close": "6d4f59e51a4ea41de12f139e0353226b0d5596f7950403683aea681c9c6228cb",
        "WebSocketsSansIOProtocol.handle_connect": "fa2597da918de20a9fa756082386272aba079ac2d59cd7f642bf153a17e1ba61",
        "WebSocketsSansIOProtocol.handle_bytes": "e8de6978cc5a1520ed464223ad80dd332522f9d3a92528b26ed3c1a14e709b77",
        "WebSocketsSansIOProtocol.handle_cont": "e8b49500b8a74ac5913e5f8cd05ae848f3c63315cde1322434de236d04e02178",
        "WebSocketsSansIOProtocol.handle_events": "af7f9cc40c90f4314cba6e0e9f53f3013ae550f2acc1909d53dffef7cc7e927a",
        "WebSocketsSansIOProtocol.handle_handshake_exception": "absent",
        "WebSocketsSansIOProtocol.handle_ping": "6c1b6ea533afca5f8d6b328ee08abe0031bd8ca8249a780ada6bc3b90f6f54ad",
        "WebSocketsSansIOProtocol.handle_pong": "5090e4d3bc69a8d6a9226d1cb662fdf2a5897404afce744da8ea2333247e4a57",
        "WebSocketsSansIOProtocol.handle_text": "884a973ba6a27f74efcdc1474c03e8c608b8f59ea3578aa6880b33ede5ea9763",
        "WebSocketsSansIOProtocol.keepalive_timeout": "03c76d1dbe0f2e10244f94149a0158f146e8a3813ef2c8d1ee9d6db504b863e4",
        "WebSocketsSansIOProtocol.pause_writing": "706981ee7dc59872c4f0289dca855e60e207501c8dd472fe7ab9d8c992e51f47",
        "WebSocketsSansIOProtocol.receive": "150d41c7f477225e9ae8d9885dd8d2bb6111026614462d285d4bd7231ab9705c",
        "WebSocketsSansIOProtocol.resume_writing": "0c0d433fc901eba00c18f13d27f180cd55bb37e89c27ecd0ac2dd2a7cd67d25b",
        "WebSocketsSansIOProtocol.run_asgi": "632f86c7cd771ab97153e9552f3f03c890d718dc8e87a6da96fec855c6542bb9",
        "WebSocketsSansIOProtocol.send": "abd99e3185f866d033577a531861f91ddcfa0d59271c8e0597ee3541e7e32293",
        "WebSocketsSansIOProtocol.send_500_response": "c512d2a8f6d87d98adf470d7f4b59b2184a52fad594c2e87287f48df084a8ce9",
        "WebSocketsSansIOProtocol.send_keepalive_ping": "26ae51073ccbb08a4ba03f2f82042ef69f4cba1440ca3ee764f5fe02de699f78",
        "WebSocketsSansIOProtocol.send_receive_event_to_app": "935390da9a9c065fbc41a88ece5dd3dd9fc54e2c9aeec04bcc56b8793e8798c1",
        "WebSocketsSansIOProtocol.shutdown": "47ea7a1725b19a87cb7ad3bf9bfbfa7c92ded3ecb231f6975331e1d44e3dfa9a",
    },
    "0.52.2": {},
    "0.52.3": {},
    # send drops the Date header websockets put in the handshake response (before the handshake completes)
    "0.52.4": {
        "WebSocketsSansIOProtocol.send": "560baa5c639d3a4cf0f4567501ee8777912f334eedf87d8dcb8c08bdfed9d444",
    },
    # keep-alive also follows the request's Connection header; Connection: close written when not kept alive
    "0.53.0": {
        "HttpToolsProtocol.on_headers_complete": "7e259152e5aade71beacb5d1b28c319358b2b0e1f3a493655b5c354b5e7d4ef9",
        "RequestResponseCycle.send": "cfc84491029529db3be8833cf904f97a3cb18e0a7fd24199b43e694d59617a00",
    },
    "0.54.0": {},
    # handle_handshake_exception (an unreadable upgrade request gets 400/414/431 and a close: the subclass's
    # data_received branch for it no longer runs); the upgrade sets the websocket protocol on the transport
    # before feeding it; connection_lost and shutdown tell an HTTP-response rejection (code 1006) apart
    "0.55.0": {
        "HttpToolsProtocol.handle_websocket_upgrade": "9eedd6b3bd8e57806eee31a3111bcde0925e536de29488f5fecf16476a4777ff",
        "WebSocketsSansIOProtocol.connection_lost": "bf96e8d2c2929c880305c23eca73103a3c9084e0585d09f9c4e251ed764fb8c8",
        "WebSocketsSansIOProtocol.data_received": "8d8ea2d7d9f07dc1b246b2f65dbca4a8b2ba4ef03b757e9353b65cfb8b2d136a",
        "WebSocketsSansIOProtocol.handle_connect": "0ae16d3d4d871bca1bd94b5454b9636439485b6d055f4ff61c389e0e9e6469b8",
        "WebSocketsSansIOProtocol.handle_handshake_exception": "e04559e6ec23547a459068b12694e4f07b3766ba2ae47561a8a5be15b5282a43",
        "WebSocketsSansIOProtocol.send": "c5511914bfc5e4c256bcfc56731796bc3650ea69ee3795f4da998ad41312fc76",
        "WebSocketsSansIOProtocol.shutdown": "acb3a22483920bf2cd755da794e340fdd42bd96e5c635849bc88cea8f5681ea9",
    },
}


# --- reading the code ------------------------------------------------------------------------------------------


def _class_tree(cls: type) -> ast.ClassDef:
    node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(node, ast.ClassDef)
    return node


def _methods(cls: type) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The methods defined in ``cls``'s own body, by name."""
    return {node.name: node for node in _class_tree(cls).body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _self_attributes(node: ast.AST, stored: bool | None = None) -> set[str]:
    """Names ``X`` of ``self.X`` in ``node`` (only assigned ones with ``stored``; read ones with
    ``stored=False``), and of ``getattr(self, "X", ...)`` / ``hasattr(self, "X")`` (read)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
            is_store = isinstance(sub.ctx, (ast.Store, ast.Del))
            if stored is None or stored == is_store:
                names.add(sub.attr)
        elif (stored is not True and isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
              and sub.func.id in ("getattr", "hasattr") and len(sub.args) >= 2
              and isinstance(sub.args[0], ast.Name) and sub.args[0].id == "self"
              and isinstance(sub.args[1], ast.Constant) and isinstance(sub.args[1].value, str)):
            names.add(sub.args[1].value)
    return names


def _super_calls(cls: type) -> set[str]:
    """Names ``m`` of every ``super().m`` in ``cls``'s body."""
    return {sub.attr for sub in ast.walk(_class_tree(cls)) if isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Call) and isinstance(sub.value.func, ast.Name) and sub.value.func.id == "super"}


def _base(ours: type) -> type:
    return ours.__bases__[0]


def _overridden(ours: type) -> set[str]:
    """Methods of ``ours`` that its base (or the base's own bases, asyncio.Protocol's included) defines."""
    return {name for name in _methods(ours) if hasattr(_base(ours), name)}


def _own_names(ours: type) -> set[str]:
    """What ``ours`` adds: its methods the base lacks, and the attributes its ``__init__`` assigns (the
    subclasses assign no attribute of the base there, and their own attributes nowhere else)."""
    return (set(_methods(ours)) - _overridden(ours)) | _self_attributes(_methods(ours)["__init__"], stored=True)


def _base_attributes_used(ours: type) -> set[str]:
    """The base's attributes ``ours`` reads or writes: every ``self.X`` that is not its own name and not a method."""
    used = set().union(*(_self_attributes(m) for m in _methods(ours).values()))
    base_methods = {name for name in dir(_base(ours)) if callable(getattr(_base(ours), name, None))}
    return used - _own_names(ours) - base_methods


def _pinned(ours: type) -> dict[str, str]:
    """Base method -> why it is pinned: overridden, depended on, or reading an attribute ``ours`` writes."""
    base = _base(ours)
    base_methods = _methods(base)
    written = set().union(*(_self_attributes(m, stored=True) for m in _methods(ours).values())) - _own_names(ours)
    pinned = {name: "overridden" for name in _overridden(ours) if name in base_methods}
    pinned.update(RELIANCE[ours]["depends"])
    for name, node in base_methods.items():
        read = _self_attributes(node, stored=False) & written
        if read and name not in pinned:
            pinned[name] = f"reads {', '.join(sorted(read))}, which {ours.__name__} writes"
    return pinned


#: the digest of a method the class does not have (in that release)
ABSENT = "absent"


def source_digest(cls: type, name: str) -> str:
    """SHA-256 of the dedented source of ``cls.name``, or :data:`ABSENT`."""
    if name not in vars(cls):
        return ABSENT
    return hashlib.sha256(textwrap.dedent(inspect.getsource(getattr(cls, name))).encode()).hexdigest()


def current_digests() -> dict[str, str]:
    """``"Class.method"`` -> digest, for every method pinned, in the installed uvicorn."""
    out: dict[str, str] = {}
    for ours in RELIANCE:
        base = _base(ours)
        for name in _pinned(ours):
            out[f"{base.__name__}.{name}"] = source_digest(base, name)
    for cls, names in OTHER_DEPENDS.items():
        for name in names:
            out[f"{cls.__name__}.{name}"] = source_digest(cls, name)
    return dict(sorted(out.items()))


def expected_digests(version: Version) -> tuple[dict[str, str], dict[str, str]]:
    """``("Class.method" -> digest, "Class.method" -> the version that recorded it)`` for ``version``."""
    expected: dict[str, str] = {}
    recorded_at: dict[str, str] = {}
    for key in sorted(DIGESTS, key=Version):
        if Version(key) > version:
            break
        for name, digest in DIGESTS[key].items():
            expected[name], recorded_at[name] = digest, key
    return expected, recorded_at


def _uvicorn_requirement() -> Requirement:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    found = [Requirement(line) for line in dependencies if Requirement(line).name == "uvicorn"]
    assert len(found) == 1, dependencies
    return found[0]


# --- the tests -------------------------------------------------------------------------------------------------

INSTALLED = Version(uvicorn.__version__)
SUBCLASSES = [CardhallWebSocketProtocol, CardhallHttpProtocol]
_ids = [cls.__name__ for cls in SUBCLASSES]


def test_the_subclasses_extend_uvicorns_protocols_directly():
    assert CardhallWebSocketProtocol.__bases__ == (WebSocketsSansIOProtocol,)
    assert CardhallHttpProtocol.__bases__ == (HttpToolsProtocol,)


def test_the_installed_uvicorn_is_inside_the_bound_and_the_bound_matches_the_versions_reviewed():
    requirement = _uvicorn_requirement()
    assert requirement.specifier.contains(INSTALLED, prereleases=True), (
        f"uvicorn {INSTALLED} is installed; pyproject.toml requires {requirement.specifier}")
    bounds = {spec.operator: Version(spec.version) for spec in requirement.specifier}
    assert set(bounds) == {">=", "<"}, f"uvicorn needs a lower and an upper bound: {requirement.specifier}"
    reviewed = sorted(map(Version, DIGESTS))
    assert bounds[">="] == reviewed[0], "the lower bound is the oldest version in DIGESTS"
    newest = reviewed[-1]
    assert bounds["<"] == Version(f"{newest.major}.{newest.minor + 1}"), (
        f"the upper bound is the next minor after the newest version reviewed ({newest})")


@pytest.mark.parametrize("ours", SUBCLASSES, ids=_ids)
def test_overridden_methods_keep_their_parameters(ours):
    base = _base(ours)
    overridden = _overridden(ours)
    assert _super_calls(ours) <= overridden, "super() calls of methods the subclass does not override"
    for name in sorted(overridden):
        mine, theirs = inspect.signature(getattr(ours, name)), inspect.signature(getattr(base, name))
        strip = [(p.name, p.kind, p.default) for p in mine.parameters.values()]
        assert strip == [(p.name, p.kind, p.default) for p in theirs.parameters.values()], (
            f"{base.__name__}.{name}{theirs} no longer takes what {ours.__name__}.{name}{mine} takes")
        assert inspect.iscoroutinefunction(getattr(ours, name)) == inspect.iscoroutinefunction(getattr(base, name)), name


@pytest.mark.parametrize("ours", SUBCLASSES, ids=_ids)
def test_the_base_attributes_used_are_declared_and_still_assigned_where_declared(ours):
    base = _base(ours)
    declared = RELIANCE[ours]["attributes"]
    assert _base_attributes_used(ours) == set(declared), (
        "RELIANCE's attributes are not the base's attributes the subclass uses (the subclass's own attributes "
        "are those its __init__ assigns)")
    methods = _methods(base)
    for attribute, assigners in declared.items():
        for method in assigners.split(", "):
            assert method in methods and attribute in _self_attributes(methods[method], stored=True), (
                f"{base.__name__}.{method} no longer assigns self.{attribute}, which {ours.__name__} uses")


@pytest.mark.parametrize("ours", SUBCLASSES, ids=_ids)
def test_no_name_the_subclass_adds_shadows_one_of_the_base(ours):
    base = _base(ours)
    in_base = set(dir(base)) | set().union(*(_self_attributes(m) for m in _methods(base).values()))
    assert _own_names(ours) & in_base == set(), f"{base.__name__} now has names {ours.__name__} adds"


def _protocols(deflate: bool = False) -> tuple[Any, Any, asyncio.AbstractEventLoop]:
    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover (never called)
        pass

    config = uvicorn.Config(app, http=CardhallHttpProtocol, ws=CardhallWebSocketProtocol, log_config=None,
                            ws_per_message_deflate=deflate)
    config.load()
    assert config.http_protocol_class is CardhallHttpProtocol and config.ws_protocol_class is CardhallWebSocketProtocol
    loop = asyncio.new_event_loop()
    # the keywords HttpToolsProtocol.handle_websocket_upgrade passes to the websocket protocol
    ws = CardhallWebSocketProtocol(config=config, server_state=ServerState(), app_state={}, _loop=loop)
    http = CardhallHttpProtocol(config, ServerState(), {}, loop)
    return ws, http, loop


def test_protocols_built_with_a_real_config_have_what_init_assigns():
    ws, http, loop = _protocols()
    try:
        for protocol in (ws, http):
            ours = type(protocol)
            for attribute, assigners in RELIANCE[ours]["attributes"].items():
                if "__init__" in assigners.split(", "):
                    assert attribute in vars(protocol), f"{_base(ours).__name__}() no longer sets {attribute}"
            for attribute in _own_names(ours) - set(_methods(ours)):
                assert attribute in vars(protocol), attribute
        assert isinstance(ws.writable, asyncio.Event) and ws.writable.is_set()
        assert ws.disconnected is False and ws.close_sent is False and ws.handshake_complete is False
        # the websockets ServerProtocol that uvicorn builds: what ws_protocol.py reads of it
        for name in ("handshake_exc", "close_sent", "extensions", "state", "data_to_send", "fail", "receive_data",
                     "available_extensions", "send_text", "send_binary"):
            assert hasattr(ws.conn, name), name
        assert ws.conn.extensions == [] and http.cycle is None and http.loop is loop
        ws.pause_writing()
        assert not ws.writable.is_set()
        ws.resume_writing()
        assert ws.writable.is_set()
        cycle = RequestResponseCycle(**{name: None for name in inspect.signature(RequestResponseCycle).parameters})
        assert cycle.response_complete is False
    finally:
        loop.close()


def test_with_deflate_on_the_protocol_offers_ours_and_websockets_negotiates_it_as_send_now_reads_it():
    """``ws_per_message_deflate``: uvicorn's ``__init__`` puts its factory in the websockets
    ``ServerProtocol``'s ``available_extensions``, where ours (``DEFLATE``) replaces it; websockets'
    negotiation then gives the ``PerMessageDeflate`` whose ``local_no_context_takeover`` and
    ``local_max_window_bits`` ``send_deflated`` reads, and compresses what ``send_text`` queues."""
    plain, _, loop = _protocols()
    loop.close()
    assert plain.conn.available_extensions == []
    ws, _, loop = _protocols(deflate=True)
    try:
        assert ws.conn.available_extensions == [DEFLATE]
        ws.conn.receive_data(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                             b"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10\r\n\r\n")
        [request] = ws.conn.events_received()
        response = ws.conn.accept(request)
        assert response.status_code == 101, response
        [deflate] = ws.conn.extensions
        assert isinstance(deflate, PerMessageDeflate)
        assert (deflate.local_no_context_takeover, deflate.local_max_window_bits) == (True, 10)
        ws.conn.send_response(response)
        ws.conn.data_to_send()
        ws.conn.send_text(b"hello hello hello")
        [frame] = ws.conn.data_to_send()
        assert frame[0] == 0xC1  # FIN, RSV1 (compressed), text
        assert zlib.decompressobj(wbits=-10).decompress(frame[2:] + b"\x00\x00\xff\xff") == b"hello hello hello"
    finally:
        loop.close()


def test_handle_events_calls_the_handlers_with_the_arguments_the_overrides_take():
    calls = {sub.func.attr: len(sub.args) for sub in ast.walk(_methods(WebSocketsSansIOProtocol)["handle_events"])
             if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
             and isinstance(sub.func.value, ast.Name) and sub.func.value.id == "self"}
    assert {name: calls.get(name) for name in ("handle_connect", "handle_ping", "handle_pong")} == {
        "handle_connect": 1, "handle_ping": 0, "handle_pong": 1}


def test_the_pinned_uvicorn_methods_are_unchanged():
    expected, recorded_at = expected_digests(INSTALLED)
    assert expected, f"uvicorn {INSTALLED} is older than every version in DIGESTS"
    current = current_digests()
    problems = []
    for name, digest in current.items():
        if name not in expected:
            problems.append(f"{name}: no digest recorded (newly pinned)")
        elif digest != expected[name]:
            problems.append(f"{name}: changed since uvicorn {recorded_at[name]} (now {digest[:16]}, "
                            f"recorded {expected[name][:16]})")
    assert not problems, (
        f"uvicorn {INSTALLED}: the source of base-class methods that server/ws_protocol.py or "
        "server/http_protocol.py override or depend on differs from what was reviewed:\n  " + "\n  ".join(problems)
        + "\nReview the subclass against the new source of each, then record the new digests: run "
        "`.venv/bin/python -m tests.server.test_uvicorn_internals` and paste its entry into DIGESTS "
        "(tests/server/test_uvicorn_internals.py); move the uvicorn bound in pyproject.toml if the minor changed.")


def _entry_for_installed() -> dict[str, str]:
    """What changed in the installed uvicorn against what DIGESTS expects of the version before it."""
    before = [Version(key) for key in DIGESTS if Version(key) < INSTALLED]
    expected = expected_digests(max(before))[0] if before else {}
    return {name: digest for name, digest in current_digests().items() if expected.get(name) != digest}


if __name__ == "__main__":
    entry = _entry_for_installed()
    if entry:
        print(f'    "{INSTALLED}": {{', *(f'        "{name}": "{digest}",' for name, digest in entry.items()), "    },",
              sep="\n")
    else:
        print(f'    "{INSTALLED}": {{}},')
    for ours in RELIANCE:
        for name, why in sorted(_pinned(ours).items()):
            print(f"# {_base(ours).__name__}.{name}: {why}", file=sys.stderr)
