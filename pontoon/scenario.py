"""Scenario files: one scripted round (docs/reference/files.md) -> the round -> the result document.

>>> doc = run_scenario({
...     "shoe": ["9S", "7H", "KD", "8C", "5C"],
...     "boxes": [{"box": 1, "wagers": [{"player": "ana", "amount": 1000}]}],
...     "actions": [{"box": 1, "action": "stand"}]})
>>> doc["dealer"]["total"], doc["players"]["ana"]["net"]
(20, -1000)
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pontoon.cards import Card, deck
from pontoon.errors import InputError
from pontoon.hand import is_pontoon, total
from pontoon.irregularities import PROCEDURES, Irregularity
from pontoon.layout import Hand, Move, Wager
from pontoon.round import Round
from pontoon.rules import RuleSet, load_rules
from pontoon.settlement import odds_text
from pontoon.shoe import ScriptedCards
from pontoon.vocab import CHOICE_ACTIONS, INSURANCE_ACTIONS, TurnKind, action_of

OMITTED = "dealer-first-card-omitted"
_KEYS = {"rules", "set", "shoe", "boxes", "actions", "expect", "description"}
_MOVE_KEYS = {"box", "action", "hand", "player", "amount", "follow"}
_IRREGULARITY_KEYS = {"irregularity", "by", "box", "hand", "player", "card"}


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Read a scenario file; a missing or malformed file is an :class:`InputError`."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a JSON scenario ({exc})") from None
    except RecursionError:
        raise InputError(f"{path}: not a JSON scenario (nested too deep)") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a scenario is a JSON object")
    return data


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise InputError(message)


def _int(value: Any, what: str) -> int:
    _need(isinstance(value, int) and not isinstance(value, bool), f"{what} must be a whole number")
    return int(value)


def scenario_rules(
    data: dict[str, Any], default: str = "nz-pontoon", overrides: dict[str, str] | None = None
) -> RuleSet:
    """The scenario's rule set: its ``rules`` (else ``default``), its ``set``, then
    ``overrides`` from the command line."""
    knobs = data.get("set", {})
    _need(isinstance(knobs, dict), "'set' must map knob names to values")
    source = data.get("rules", default)
    _need(isinstance(source, str), "'rules' must be a preset name or a rule file")
    return load_rules(source, {**knobs, **(overrides or {})})


def scenario_cards(rules: RuleSet, codes: Any) -> list[Card]:
    """The shoe of a scenario: every card must exist in the rule set's decks."""
    _need(isinstance(codes, list), "'shoe' must be a list of cards like \"AS\"")
    cards = []
    for code in codes:
        _need(isinstance(code, str), f"unknown card {code!r}")
        cards.append(Card.parse(code))
    in_deck = set(deck(rules.deck))
    for card in cards:
        _need(card in in_deck, f"unknown card {card.code!r}: a {rules.deck} deck has no such card")
    for card, n in Counter(cards).items():
        _need(
            n <= rules.decks, f"card {card.code} appears {n} times in a shoe of {rules.decks} decks"
        )
    return cards


def scenario_move(item: Any, index: int) -> Move:
    _need(isinstance(item, dict), f"action {index + 1} must be an object")
    unknown = set(item) - _MOVE_KEYS
    _need(not unknown, f"action {index + 1}: unknown key(s) {', '.join(sorted(unknown))}")
    _need("box" in item and "action" in item, f"action {index + 1} needs 'box' and 'action'")
    player = item.get("player")
    _need(player is None or isinstance(player, str), f"action {index + 1}: 'player' is a name")
    action = item["action"]
    _need(isinstance(action, str), f"action {index + 1}: 'action' is a word like \"hit\"")
    hand = item.get("hand")
    amount = item.get("amount")
    follow = item.get("follow")
    _need(follow in (None, "both", 0, 1), f"action {index + 1}: 'follow' is \"both\", 0 or 1")
    return Move(
        action_of(action),
        _int(item["box"], f"action {index + 1}: 'box'"),
        hand=None if hand is None else _int(hand, f"action {index + 1}: 'hand'"),
        player=player,
        amount=None if amount is None else _int(amount, f"action {index + 1}: 'amount'"),
        follow=follow,
    )


def scenario_irregularity(item: dict[str, Any], index: int, rules: RuleSet) -> Irregularity:
    """An ``{"irregularity": KIND, ...}`` item; ``by`` defaults to the role the rule names."""
    where = f"action {index + 1}"
    unknown = set(item) - _IRREGULARITY_KEYS
    _need(not unknown, f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    kind = item["irregularity"]
    _need(isinstance(kind, str) and kind in PROCEDURES, f"{where}: unknown irregularity {kind!r}")
    entry = PROCEDURES[kind].get(rules.rule_book)
    by = item.get("by") or ("supervisor" if entry and entry[1] else "dealer")
    for key in ("by", "player", "card"):
        _need(item.get(key) is None or isinstance(item[key], str), f"{where}: {key!r} is a word")
    box, hand = item.get("box"), item.get("hand")
    return Irregularity(
        kind,
        by,
        None if box is None else _int(box, f"{where}: 'box'"),
        None if hand is None else _int(hand, f"{where}: 'hand'"),
        item.get("player"),
        item.get("card"),
    )


def _takes_defaults(rnd: Round, move: Move) -> bool:
    """Whether open offers must be closed (their defaults taken) before ``move``."""
    turn = rnd.to_act()
    if turn is None:
        return False
    if turn.kind is TurnKind.CHOOSE:
        return move.action not in CHOICE_ACTIONS
    if move.action in INSURANCE_ACTIONS:
        return False
    if turn.kind is TurnKind.INSURANCE:
        return True
    if turn.kind is not TurnKind.FOLLOW or turn.box is None:
        return False
    return move.box != turn.box or rnd.player_of(move) == rnd.boxes[turn.box].seated


def play_scenario(
    data: dict[str, Any], default: str = "nz-pontoon", overrides: dict[str, str] | None = None
) -> Round:
    """Play a scenario (already parsed) and return the finished round."""
    unknown = set(data) - _KEYS
    _need(not unknown, f"unknown scenario key(s): {', '.join(sorted(unknown))}")
    rules = scenario_rules(data, default, overrides)
    rnd = Round(rules, ScriptedCards(scenario_cards(rules, data.get("shoe"))))
    boxes = data.get("boxes")
    if not isinstance(boxes, list) or not boxes:
        raise InputError("'boxes' must list at least one box")
    listed: set[int] = set()
    for b in boxes:
        _need(isinstance(b, dict) and "box" in b, "each box needs a 'box' number")
        number = _int(b["box"], "'box'")
        _need(number not in listed, f"box {number} is listed twice: list each box once (rule 15)")
        listed.add(number)
        wagers = b.get("wagers")
        if not isinstance(wagers, list) or not wagers:
            raise InputError(f"box {b['box']} needs 'wagers'")
        players: set[str] = set()
        for w in wagers:
            _need(
                isinstance(w, dict) and "player" in w and "amount" in w,
                f"box {b['box']}: each wager needs 'player' and 'amount'",
            )
            player = w["player"]
            if isinstance(player, str):
                _need(
                    player not in players,
                    f"box {number}: {player!r} wagers twice: one wager a player on a box (15.3)",
                )
                players.add(player)
            rnd.place_wager(number, w["player"], _int(w["amount"], "'amount'"))
            if w.get("super_sevens") is not None:
                sevens = _int(w["super_sevens"], "'super_sevens'")
                rnd.place_side_wager(number, w["player"], sevens)
    actions = data.get("actions", [])
    _need(isinstance(actions, list), "'actions' must be a list")
    omitted = any(isinstance(a, dict) and a.get("irregularity") == OMITTED for a in actions)
    rnd.deal(omit_dealer_card=omitted)  # 15.5: the shoe lists the cards as they fell
    for i, item in enumerate(actions):
        if isinstance(item, dict) and "irregularity" in item:
            turn = rnd.to_act()
            if turn is not None and turn.kind is TurnKind.FOLLOW:
                rnd.apply_defaults()
            rnd.apply_irregularity(scenario_irregularity(item, i, rules))
            continue
        move = scenario_move(item, i)
        if _takes_defaults(rnd, move):
            rnd.apply_defaults()
        rnd.apply(move)
    rnd.apply_defaults()
    if not rnd.over:
        turn = rnd.to_act()
        assert turn is not None and turn.kind is TurnKind.DECIDE
        raise InputError(
            f"missing action: box {turn.box} hand {turn.hand} must decide (rule 8.3); "
            f"legal: {', '.join(m.action for m in rnd.legal_moves())}"
        )
    return rnd


def _wager_doc(w: Wager) -> dict[str, Any]:
    out: dict[str, Any] = {"player": w.player, "amount": w.amount, "outcome": w.outcome}
    if w.odds is not None:
        out["odds"] = odds_text(w.odds)
    out["net"] = w.net
    return out


def _hand_doc(hand: Hand) -> dict[str, Any]:
    return {
        "cards": [c.code for c in hand.cards],
        "total": hand.total,
        "pontoon": is_pontoon(hand.cards) and not hand.from_split,
        "doubled": hand.doubled,
        "wagers": [_wager_doc(w) for w in hand.wagers],
    }


def result_document(rnd: Round) -> dict[str, Any]:
    """The output of ``pontoon round``: dealer, boxes, players' net, and the event log."""
    return {
        "rules": rnd.rules.name,
        "dealer": {"cards": [c.code for c in rnd.dealer], "total": total(rnd.dealer)},
        "boxes": [
            {
                "box": box.number,
                "hands": [_hand_doc(h) for h in box.hands],
                "insurance": [_wager_doc(w) for w in box.insurance.values()],
                "super_sevens": [_wager_doc(w) for w in box.sevens.values()],
            }
            for box in rnd.order
        ],
        "players": {p: {"net": rnd.net(p)} for p in rnd.players},
        "house": {"net": rnd.house},
        "events": [e.to_dict() for e in rnd.events],
    }


def run_scenario(
    data: dict[str, Any], default: str = "nz-pontoon", overrides: dict[str, str] | None = None
) -> dict[str, Any]:
    """Play a scenario and return its result document."""
    return result_document(play_scenario(data, default, overrides))
