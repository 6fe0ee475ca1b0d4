"""The rule set: one frozen, validated record of every knob a casino may set.

Presets are data (``pontoon/presets/*.toml``); a rule file is TOML with ``preset = "NAME"``
and any knobs to change; ``--set KEY=VALUE`` changes one knob. Each knob names the rule it
comes from, so ``pontoon rules NAME`` can print where every value is gazetted or assumed.

>>> rules = load_rules("nz-pontoon")
>>> rules.decks, rules.natural_pays, rules.dealer_hits_soft_17
(6, Fraction(3, 2), True)
>>> load_rules("nz-pontoon", {"decks": "8"}).decks
8
>>> load_rules("nz-pontoon", {"decks": "9"})
Traceback (most recent call last):
...
pontoon.errors.InputError: knob 'decks' must be between 1 and 8, not 9
"""

from __future__ import annotations

import dataclasses
import functools
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any, Final

from pontoon.errors import InputError
from pontoon.memo import Memo

PRESETS: Final = ("nz-pontoon", "nz-blackjack", "spanish-21", "classic-blackjack")
DEFAULT_PRESET: Final = "nz-pontoon"


def _knob(rule: str, doc: str, choices: tuple[str, ...] = (), lo: float = 0, hi: float = 0) -> Any:
    return field(metadata={"rule": rule, "doc": doc, "choices": choices, "range": (lo, hi)})


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every knob of the game. Build one with :func:`load_rules`; change one with
    :meth:`replace`. Amounts are integers of the minor unit (cents); odds are fractions."""

    name: str = _knob("-", "name of the rule set")
    # Equipment and shoe (sections 1-4, 6-8)
    deck: str = _knob("1-4 (assumed)", "kind of deck", ("spanish", "standard"))
    decks: int = _knob("1-4 (assumed)", "decks in the shoe", lo=1, hi=8)
    penetration: float = _knob("7 (assumed)", "part of the shoe dealt before the cutting card")
    burn_card: bool = _knob("8.1", "first card after a shuffle is burnt face down")
    # Dealer
    dealer_peeks: bool = _knob("8.5", "hole card and peek (US) instead of no hole card")
    dealer_hits_soft_17: bool = _knob("14.3", "dealer draws to a soft 17")
    dealer_natural_takes: str = _knob(
        "13.7", "a dealer pontoon takes original wagers only, or all", ("original", "all")
    )
    # Player's 21 and odds (sections 9, 11)
    natural_pays: Fraction = _knob("9.1", "odds paid on a player pontoon")
    player_21_wins: bool = _knob("9.2", "any player 21 wins and is paid at once")
    bonuses: bool = _knob("11.1", "bonus odds on 21s of five or more cards and 6-7-8 / 7-7-7")
    five_card_21_pays: Fraction = _knob("11.1", "odds on a 21 of five cards")
    six_card_21_pays: Fraction = _knob("11.1", "odds on a 21 of six cards")
    seven_card_21_pays: Fraction = _knob("11.1", "odds on a 21 of seven or more cards")
    three_card_mixed_pays: Fraction = _knob("11.1", "odds on 6-7-8 or 7-7-7 in mixed suits")
    three_card_suited_pays: Fraction = _knob("11.1", "odds on 6-7-8 or 7-7-7 in one suit")
    three_card_spades_pays: Fraction = _knob("11.1", "odds on 6-7-8 or 7-7-7 in spades")
    bonus_on_double: bool = _knob("11.1", "bonus odds paid on a doubled hand")
    super_bonus: bool = _knob("11.2", "Super Bonus on suited 7-7-7 against a dealer 7")
    super_bonus_min: int = _knob("11.2", "smallest wager that earns the Super Bonus")
    super_bonus_small: int = _knob("11.2", "Super Bonus for a wager below the threshold")
    super_bonus_threshold: int = _knob("11.2", "wager from which the large Super Bonus is paid")
    super_bonus_large: int = _knob("11.2", "Super Bonus for a wager at or above the threshold")
    super_bonus_others: int = _knob("11.2", "paid to every other player with a wager")
    # Drawing (section 14)
    must_draw_below: int = _knob(
        "14.1(d)", "a point total (the best count) below this must draw (0: none)", lo=0, hi=22
    )
    # Surrender and insurance (sections 9, 10)
    surrender: str = _knob(
        "9.3", "surrender: none, late, void-on-pontoon (9.4)", ("none", "late", "void-on-pontoon")
    )
    surrender_returns: Fraction = _knob("9.3 (assumed)", "part of a surrendered wager returned")
    insurance: bool = _knob("10 (assumed)", "insurance offered against a dealer ace")
    insurance_pays: Fraction = _knob("10 (assumed)", "odds paid on insurance")
    insurance_max: Fraction = _knob("10 (assumed)", "largest insurance, as a part of the wager")
    # Double down (section 12)
    double_on: str = _knob(
        "12 (assumed)", "which hands may double", ("any-two", "any-number", "9-11", "10-11")
    )
    double_after_split: bool = _knob("12 (assumed)", "split hands may double")
    double_rescue: bool = _knob("12 (assumed)", "after a double, forfeit the original wager")
    # Splitting (section 13)
    split_max_hands: int = _knob(
        "13 (assumed)", "hands a box may split into (1: no splits)", lo=1, hi=4
    )
    split_by: str = _knob(
        "13 (assumed)", "pairs are cards of one rank or one value", ("rank", "value")
    )
    resplit_aces: bool = _knob("13 (assumed)", "split aces may be split again")
    hit_split_aces: bool = _knob("14.1(c)", "split aces may draw more than one card")
    # Table and boxes (section 15)
    boxes: int = _knob("15 (assumed)", "boxes on the layout", lo=1, hi=7)
    players_per_box: int = _knob("15.1", "players who may wager on one box", lo=1, hi=3)
    boxes_per_player: int = _knob("15.4", "boxes one player may wager on", lo=1, hi=7)
    table_min: int = _knob("15.6", "smallest wager on a box")
    table_max: int = _knob("15.2", "largest wager of one player on a box")
    box_max: int = _knob("15.2", "largest total of all wagers on one box (0: no sign)")
    # Irregularities (Pontoon 16, Blackjack 15.5-15.11)
    rule_book: str = _knob(
        "16 / 15.5-15.11",
        "irregularity procedures of Pontoon or Blackjack",
        ("pontoon", "blackjack"),
    )
    # Super Sevens side wager (Blackjack 1996)
    super_sevens: bool = _knob("Super Sevens", "the Super Sevens side wager is offered")
    super_sevens_min: int = _knob("Super Sevens", "smallest Super Sevens wager")
    super_sevens_max: int = _knob("Super Sevens", "largest Super Sevens wager")
    super_sevens_one_pays: Fraction = _knob("Super Sevens", "odds on a first card 7")
    super_sevens_two_pays: Fraction = _knob("Super Sevens", "odds on 7-7 unsuited")
    super_sevens_two_suited_pays: Fraction = _knob("Super Sevens", "odds on 7-7 suited")
    super_sevens_three_pays: Fraction = _knob("Super Sevens", "odds on 7-7-7 unsuited")
    super_sevens_three_suited_pays: Fraction = _knob("Super Sevens", "odds on 7-7-7 suited")
    # The table's conduct, not gazetted (TABLE_POLICY: no part of a round's mathematics)
    interrupted: str = _knob(
        "16.5 (assumed)",
        "a round abandoned or cut by a failure: resume, or void (16.5) or complete "
        "by the optimal chart after interrupted_minutes",
        ("resume", "void", "complete"),
    )
    interrupted_minutes: int = _knob(
        "16.5 (assumed)",
        "minutes a dealt round may wait with no event recorded before that",
        lo=1,
        hi=1440,
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            choices = f.metadata["choices"]
            if choices and value not in choices:
                raise InputError(
                    f"knob {f.name!r} must be one of {', '.join(choices)}, not {value!r}"
                )
            lo, hi = f.metadata["range"]
            if hi and not lo <= value <= hi:
                raise InputError(f"knob {f.name!r} must be between {lo} and {hi}, not {value}")
        if not 0 < self.penetration <= 1:
            raise InputError(f"knob 'penetration' must be in (0, 1], not {self.penetration}")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Fraction) and value <= 0:
                raise InputError(f"knob {f.name!r} must be positive, not {value}")
        if self.surrender_returns >= 1 or self.insurance_max > 1:
            raise InputError("knobs 'surrender_returns' and 'insurance_max' must be below 1")
        for name in _MONEY_KNOBS:
            if getattr(self, name) < 0:
                raise InputError(f"knob {name!r} must not be negative")
        if self.table_min < 1 or self.table_max < self.table_min:
            raise InputError("knobs 'table_min' and 'table_max' need 1 <= table_min <= table_max")
        if self.box_max and self.box_max < self.table_min:
            raise InputError("knob 'box_max' must be 0 (no sign) or at least 'table_min'")
        if self.super_sevens_min < 1 or self.super_sevens_max < self.super_sevens_min:
            raise InputError("knobs 'super_sevens_min' and 'super_sevens_max' need 1 <= min <= max")
        if self.boxes_per_player > self.boxes:
            raise InputError("knob 'boxes_per_player' must not exceed 'boxes'")

    @property
    def natural_word(self) -> str:
        """What the table calls a natural: the blackjack presets say ``blackjack``, Pontoon
        says ``pontoon`` (the engine's word for it everywhere)."""
        blackjack = "blackjack" in self.name or "21" in self.name
        return "blackjack" if blackjack else "pontoon"

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some knobs changed (validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every knob, with odds written ``"3:2"``: the shape of rule files and JSON output."""
        return {f.name: _show(getattr(self, f.name)) for f in dataclasses.fields(self)}


_MONEY_KNOBS: Final = (
    "table_min",
    "table_max",
    "box_max",
    "super_bonus_min",
    "super_bonus_small",
    "super_bonus_threshold",
    "super_bonus_large",
    "super_bonus_others",
    "super_sevens_min",
    "super_sevens_max",
)


# Knobs of the table's conduct rather than of the game: what becomes of an interrupted round
# (docs/operators/deploying.md). They change no round's mathematics: analysis and simulator ignore
# them. Rule files, presets and round logs written before them read as their defaults.
TABLE_POLICY: Final = frozenset({"interrupted", "interrupted_minutes"})
_POLICY_DEFAULTS: Final[dict[str, Any]] = {"interrupted": "resume", "interrupted_minutes": 10}


def knob_info() -> list[tuple[str, str, str]]:
    """(knob, rule number, description) for every knob, in declaration order."""
    return [
        (f.name, f.metadata["rule"], f.metadata["doc"])
        for f in dataclasses.fields(RuleSet)
        if f.name != "name"
    ]


def _show(value: Any) -> Any:
    if isinstance(value, Fraction):
        return f"{value.numerator}:{value.denominator}"
    return value


def parse_odds(text: str) -> Fraction:
    """``"3:2"``, ``"3/2"``, ``"1.5"`` or ``"2"`` as a fraction.

    >>> parse_odds("3:2"), parse_odds("2")
    (Fraction(3, 2), Fraction(2, 1))
    """
    try:
        if ":" in text:
            num, den = text.split(":")
            return Fraction(int(num), int(den))
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"odds must be written like 3:2, not {text!r}") from None


_WHAT: Final = {
    "bool": "a true/false",
    "int": "a whole-number",
    "float": "a number",
    "Fraction": "an odds (3:2)",
}
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _coerce(name: str, kind: str, value: Any) -> Any:
    """A knob value from TOML or from a ``--set`` string, converted to the knob's type."""
    what = _WHAT.get(kind, "a text")
    bad = InputError(f"knob {name!r} needs {what} value, not {value!r}")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise bad
    if kind == "int":
        if isinstance(value, bool):
            raise bad
        if isinstance(value, int):
            return value
        digits = value.strip().lstrip("-") if isinstance(value, str) else ""
        if digits.isascii() and digits.isdigit():  # (ASCII: "٦".isdigit() too)
            return int(value)
        raise bad
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise bad
        try:
            return float(value)
        except ValueError:
            raise bad from None
    if kind == "Fraction":
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise bad
        return parse_odds(str(value))
    if not isinstance(value, str):
        raise bad
    return value


_KINDS: Final = {f.name: str(f.type) for f in dataclasses.fields(RuleSet)}


def _apply(base: Mapping[str, Any], changes: Mapping[str, Any], where: str) -> dict[str, Any]:
    values = dict(base)
    for key, value in changes.items():
        if key not in _KINDS or key == "name":
            raise InputError(f"unknown knob {key!r} in {where}; `pontoon rules` lists them")
        values[key] = _coerce(key, _KINDS[key], value)
    return values


def _preset_values(name: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise InputError(f"unknown rule set {name!r}: choose one of {', '.join(PRESETS)} or a file")
    text = resources.files("pontoon").joinpath(f"presets/{name}.toml").read_text("utf-8")
    data = tomllib.loads(text)
    base = {"name": name, **_POLICY_DEFAULTS}
    return _apply(base, data, f"preset {name}")


def load_rules(source: str = DEFAULT_PRESET, overrides: Mapping[str, Any] | None = None) -> RuleSet:
    """The rule set named ``source`` (a preset) or read from the TOML file ``source``, with
    ``overrides`` (knob -> value or string) applied last."""
    if source in PRESETS:
        values = _preset_values(source)
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"unknown rule set {source!r}: not a preset and not a file")
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{source}: not a TOML rule file ({exc})") from None
        preset = data.pop("preset", DEFAULT_PRESET)
        if not isinstance(preset, str):
            raise InputError(f"{source}: 'preset' must be a preset name")
        values = _apply(_preset_values(preset), data, source)
        values["name"] = path.stem
    values = _apply(values, overrides or {}, "--set")
    missing = [k for k in _KINDS if k not in values]
    if missing:
        raise InputError(f"rule set {source!r} does not set {', '.join(missing)}")
    return RuleSet(**values)


def rules_from_dict(data: Mapping[str, Any]) -> RuleSet:
    """A rule set from :meth:`RuleSet.to_dict` output (as recorded in a round's log)."""
    values = _apply(
        {"name": str(data.get("name", "custom")), **_POLICY_DEFAULTS},
        {k: v for k, v in data.items() if k != "name"},
        "rules",
    )
    missing = [k for k in _KINDS if k not in values]
    if missing:
        raise InputError(f"the rule set does not set {', '.join(missing)}")
    return RuleSet(**values)


def parse_set_options(items: list[str]) -> dict[str, str]:
    """``["decks=8", "surrender=none"]`` as a mapping; a malformed item is an error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set needs KEY=VALUE, not {item!r}")
        out[key.strip()] = value.strip()
    return out


_JSON: dict[bool, Memo[RuleSet, str]] = {False: Memo(), True: Memo()}  # by sort_keys
_KEEP: Final = object()  # no default: the knob is always written


def rules_json(rules: RuleSet, *, sort_keys: bool = False) -> str:
    """The rule set as compact JSON, knobs in order (a round's first event) or sorted (the
    store's shoe states); made once per rule set object, as hashing one costs more. A knob of
    :data:`TABLE_POLICY` at its default is left out, so that the logs and shoes recorded
    before it existed read (:func:`rules_from_dict`) and compare as they were written.

    >>> "interrupted" in rules_json(load_rules("nz-pontoon"))
    False
    >>> '"interrupted":"void"' in rules_json(load_rules("nz-pontoon", {"interrupted": "void"}))
    True
    """
    return _JSON[sort_keys].get(rules, _SORTED_JSON if sort_keys else _knobs_json)


def _knobs_json(rules: RuleSet, sort_keys: bool = False) -> str:
    knobs = {k: v for k, v in rules.to_dict().items() if _POLICY_DEFAULTS.get(k, _KEEP) != v}
    return json.dumps(knobs, separators=(",", ":"), sort_keys=sort_keys)


_SORTED_JSON: Final = functools.partial(_knobs_json, sort_keys=True)
