"""``match_options`` in the game schemas are the engines' ``options_spec``
(one source: a change of an option shows here until the schema is rebuilt),
and the engines' option checks refuse what those schemas refuse."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from cardhall.engine.options import Option, OptionError, options_schema
from cardhall.engine.registry import GAMES, engine_class
from cardhall.protocol.schemas import BASE, GAME_DOCUMENT, documents, registry


def _def_name(game: str) -> str:
    """The game's own match_options (a document shared by two games names them per game)."""
    doc = documents()[GAME_DOCUMENT[game]]["$defs"]
    return f"match_options_{game}" if f"match_options_{game}" in doc else "match_options"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_match_options_schema_is_built_from_the_engine(game):
    cls = engine_class(game)
    stored = documents()[GAME_DOCUMENT[game]]["$defs"][_def_name(game)]
    built = options_schema(cls.options_spec, stored["description"])
    assert stored == built, f"rebuild {GAME_DOCUMENT[game]} $defs/{_def_name(game)} from {cls.__name__}.options_spec"
    assert [o.name for o in cls.options_spec] == list(cls.default_options)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_engine_and_schema_agree_on_values(game):
    """Each option's default passes both; a value out of its range fails both."""
    cls = engine_class(game)
    schema = Draft202012Validator({"$ref": f"{BASE}{GAME_DOCUMENT[game]}#/$defs/{_def_name(game)}"},
                                  registry=registry())
    defaults = {o.name: (1 if o.type == "seat" and o.default is None else o.default) for o in cls.options_spec}
    assert list(schema.iter_errors(defaults)) == []
    for option in cls.options_spec:
        bad = _refused(option)
        if bad is None:
            continue
        with pytest.raises(OptionError) as err:
            cls.resolve_options({option.name: bad})
        assert err.value.option == option.name
        assert list(schema.iter_errors({**defaults, option.name: bad})), option.name


def _refused(option: Option):
    if option.type in ("int", "number"):
        return option.min - 1 if option.min is not None else "1"
    if option.type == "choice":
        return "neither"
    if option.type in ("bool", "seat"):
        return "yes"
    if option.type == "text":
        return "x" * (int(option.max) + 1)
    return None
