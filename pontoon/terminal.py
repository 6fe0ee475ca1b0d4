"""``pontoon play``: one person at a table in the terminal, against the dealer.

The table only reads and shows: every decision goes to :class:`~pontoon.round.Round`, which
either makes it or refuses it naming the rule. On a terminal the cards are coloured; with
input piped from a script the output is plain text and each answer is echoed after its
prompt, so a transcript reads like a session. The end of the input ends the session cleanly:
a round in progress is finished as for an absent player (16.6).

Money is typed in dollars and kept in cents, without floats:

>>> parse_dollars("10"), parse_dollars("$10.5"), parse_dollars("0.05")
(1000, 1050, 5)
>>> dollars(123456), signed(-250), signed(750)
('$1,234.56', '-$2.50', '+$7.50')
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.text import Text

from pontoon.cards import Card
from pontoon.errors import IllegalAction, InputError, PontoonError
from pontoon.events import Event
from pontoon.hand import describe, hard_total
from pontoon.irregularities import Irregularity
from pontoon.layout import Box, Hand, Move, Wager
from pontoon.money import dollars, parse_dollars, signed
from pontoon.round import Round
from pontoon.rules import RuleSet
from pontoon.shoe import Shoe, commitment_of, seeded
from pontoon.vocab import INSURANCE_ACTIONS, Action, HandState, Outcome, Procedure, Role, TurnKind

if TYPE_CHECKING:
    from pontoon.store.recorder import RoundLog
    from pontoon.store.session import TerminalRecorder

YOU: Final = "you"
KEYS: Final = {
    Action.HIT: "h",
    Action.STAND: "s",
    Action.DOUBLE: "d",
    Action.SPLIT: "p",
    Action.SURRENDER: "r",
    Action.INSURE: "i",
    Action.NO_INSURANCE: "n",
    Action.RESCUE: "x",
}
ACTION_OF_KEY: Final = {key: action for action, key in KEYS.items()}
ACTION_OF_WORD: Final = {action.value: action for action in KEYS}
QUIT: Final = ("q", "quit", "exit")


# ---------------------------------------------------------------------------- the table
class EndOfInput(Exception):
    """The input has ended (EOF, Ctrl-D, unreadable input)."""


class Table:
    """One person (``you``) playing ``args.boxes`` boxes for as long as the input lasts."""

    def __init__(self, rules: RuleSet, args: argparse.Namespace, console: Console) -> None:
        self.rules = rules
        self.console = console
        self.boxes: int = args.boxes
        self.default_wager: int = rules.table_min if args.wager is None else args.wager
        self.bankroll: int = args.bankroll
        self.start_bankroll = self.bankroll
        self.max_rounds: int | None = args.rounds
        self.seed: int | None = args.seed
        self.shoe = Shoe(rules, seeded(args.seed))
        self.last_wager: dict[int, int] = {}
        self.rounds = 0
        self.echo = not _isatty(sys.stdin)
        self.symbols = console.encoding.lower().startswith("utf")
        self.natural = rules.natural_word
        self.shown = 0  # events of the current round already narrated
        self.dealer_shown = 0  # dealer's cards narrated so far (for running totals)
        # --db: every event is committed to the store before it is shown (write-ahead)
        self.recorder: TerminalRecorder | None = None
        self.roundlog: RoundLog | None = None
        self.resume: RoundLog | None = None
        self.notes: list[str] = []

    def attach(self, recorder: TerminalRecorder) -> None:
        """Record to the store; take the shoe, the money and any unfinished round from it."""
        from pontoon.store.revealed import disclosed, set_aside

        self.recorder = recorder
        aside = set_aside(recorder.log, self.rules)  # a stored shoe of other rules: revealed
        recovery = recorder.recover(self.bankroll, self.seed)
        self.shoe = recovery.shoe
        self.bankroll = self.start_bankroll = recovery.bankroll
        self.resume = recovery.resumed
        self.notes = recovery.notes
        if aside is not None:  # (with the new shoe, in one write: it is revealed once)
            recorder.log.append([(disclosed(aside), False)], shoe=self.shoe)
            self.notes.append(
                "The table's last shoe belongs to other rules: it is revealed, not dealt from."
            )

    def record(self) -> None:
        """Commit the round's events not yet in the store (before they are shown)."""
        if self.roundlog is not None:
            self.roundlog.commit(self.shoe)

    # ------------------------------------------------------------------ output
    def say(self, *parts: str | tuple[str, str] | Text, style: str = "") -> None:
        self.console.print(Text.assemble(*parts, style=style))

    def card(self, c: Card) -> Text:
        text = c.pretty() if self.symbols else c.code
        return Text(text, style="bold red" if c.suit in "HD" else "bold")

    def cards(self, cards: Sequence[Card], hidden: int = 0) -> Text:
        out = Text()
        for c in cards:
            out.append_text(self.card(c))
            out.append(" ")
        out.append("?? " * hidden, style="dim")
        out.rstrip()
        return out

    def total_text(self, cards: Sequence[Card], from_split: bool = False) -> str:
        return describe(cards, from_split=from_split, natural=self.natural)

    # ------------------------------------------------------------------ input
    def ask(self, prompt: Text) -> str:
        """One line of input, stripped; :class:`EndOfInput` at the end of the input."""
        try:
            if not self.echo:
                return self.console.input(prompt).strip()
            self.console.print(prompt, end="")
            line = sys.stdin.readline() if sys.stdin is not None else ""
        except (EOFError, OSError, ValueError, UnicodeDecodeError):
            self.console.print()
            raise EndOfInput from None
        if not line:
            self.console.print()
            raise EndOfInput
        line = line.strip()
        self.console.print(line, markup=False, highlight=False)
        return line

    # ------------------------------------------------------------------ the session
    def run(self) -> int:
        r = self.rules
        shuffle = f"seed {self.seed}" if self.seed is not None else "a secure shuffle"
        self.say(
            ("Pontoon", "bold"),
            f" - rules {r.name}: {r.decks} {r.deck.capitalize()} decks ({shuffle})",
        )
        self.say(
            f"Table limits {dollars(r.table_min)} to {dollars(r.table_max)} a box.", style="dim"
        )
        self.say(
            "Keys: h hit, s stand, d double, p split, r surrender, x rescue, i insure, "
            "n no insurance, q quit; d and i take an amount for less (d 2.50).",
            style="dim",
        )
        for note in self.notes:
            self.say(note, style="yellow")
        status = 0
        reason = ""
        try:
            while True:
                if self.max_rounds is not None and self.rounds >= self.max_rounds:
                    reason = f"{self.rounds} round{'s' if self.rounds != 1 else ''} played."
                    break
                if self.bankroll < r.table_min:
                    reason = (
                        f"Your bankroll {dollars(self.bankroll)} is below the table minimum "
                        f"{dollars(r.table_min)}."
                    )
                    break
                if not self.play_round():
                    reason = "You leave the table."
                    break
        except KeyboardInterrupt:
            reason = "Interrupted."
            status = 130
        if self.recorder is not None:
            self.recorder.end()  # the money leaves the table with you
        net = self.bankroll - self.start_bankroll
        self.console.print()
        self.say(reason)
        self.say(
            ("Session: ", "bold"),
            f"{self.rounds} round{'s' if self.rounds != 1 else ''}, net ",
            (signed(net), _money_style(net)),
            f", bankroll {dollars(self.bankroll)}.",
        )
        return status

    def play_round(self) -> bool:
        """Play one round; False when you leave (q or end of input) before or during it."""
        if self.resume is not None:
            return self.resumed_round(self.resume)
        rnd = Round(self.rules, self.shoe)
        self.shown = 1  # the "rules" event
        self.dealer_shown = 0
        self.console.print()
        number = self.rounds + 1 if self.recorder is None else self.recorder.next_number
        self.console.rule(f"Round {number}", style="dim")
        try:
            if not self.take_wagers(rnd):
                return False
        except EndOfInput:
            return False
        if self.recorder is not None:
            self.roundlog = self.recorder.start(rnd)
        rnd.deal()
        self.rounds += 1
        self.narrate(rnd, initial=True)
        return self.play_on(rnd)

    def resumed_round(self, roundlog: RoundLog) -> bool:
        """Go on with a round the store reconstructed after an interruption."""
        self.resume = None
        self.roundlog = roundlog
        rnd = roundlog.round
        self.shown = len(rnd.events)
        self.dealer_shown = len(rnd.dealer)
        self.console.print()
        self.console.rule(f"Round {roundlog.number} (resumed)", style="dim")
        self.rounds += 1
        if rnd.over:
            self.finish(rnd)
            return True
        return self.play_on(rnd)

    def play_on(self, rnd: Round) -> bool:
        """The decisions of a dealt round, until it is over or you leave."""
        staying = True
        try:
            while staying and not rnd.over:
                staying = self.decide(rnd)
        except EndOfInput:
            staying = False
        except KeyboardInterrupt:
            self.absent(rnd)
            self.finish(rnd)
            raise
        self.absent(rnd)  # 16.6, when you leave during the round
        self.finish(rnd)
        return staying

    def take_wagers(self, rnd: Round) -> bool:
        """Ask the wager of each box (15.6: at least the minimum on each); False on q."""
        self.say(f"Bankroll {dollars(self.bankroll)}.")
        placed = 0
        for number in range(1, self.boxes + 1):
            left = self.bankroll - placed
            if left < self.rules.table_min:
                self.say(
                    f"{dollars(left)} left: not enough for box {number}, "
                    f"playing {number - 1} box{'es' if number > 2 else ''} this round.",
                    style="yellow",
                )
                break
            default = min(self.last_wager.get(number, self.default_wager), left)
            while True:
                answer = self.ask(
                    Text.assemble(
                        f"Wager on box {number} (Enter = {dollars(default)}, q quits): ",
                        style="bold",
                    )
                )
                if answer.lower() in QUIT:
                    return False
                try:
                    amount = parse_dollars(answer) if answer else default
                    if amount > left:
                        raise InputError(
                            f"you have {dollars(left)} left for this box, not {dollars(amount)}"
                        )
                    rnd.place_wager(number, YOU, amount)
                except InputError as exc:
                    self.refuse(exc)
                    continue
                break
            self.last_wager[number] = amount
            placed += amount
        return True

    # ------------------------------------------------------------------ decisions
    def decide(self, rnd: Round) -> bool:
        """Show the layout, ask one decision and apply it; False on q."""
        moves = rnd.legal_moves(YOU)
        turn = rnd.to_act()
        deciding = turn if turn is not None and turn.kind is TurnKind.DECIDE else None
        box_number = moves[0].box if moves else 0
        if deciding is not None and deciding.box is not None:
            box_number = deciding.box
        mine = [m for m in moves if m.box == box_number]
        if not mine:  # nothing for you to decide (never expected at a one-person table)
            self.defaults(rnd)
            return True
        box = rnd.boxes[box_number]
        self.layout(rnd)
        offers = [self.offer(rnd, box, m) for m in mine]
        if deciding is not None:
            what = self.hand_label(box, deciding.hand)
        else:
            what = f"Box {box_number} insurance"
        prompt = Text.assemble((what, "bold"), ": ", ", ".join(offers), ", q quit > ")
        while True:
            answer = self.ask(prompt)
            words = answer.lower().split()
            if not words:
                continue
            if words[0] in QUIT:
                return False
            action = ACTION_OF_KEY.get(words[0]) or ACTION_OF_WORD.get(words[0])
            if action is None:
                keys = ", ".join(self.offer(rnd, box, m) for m in mine)
                self.say(f"Unknown key {words[0]!r}: choose {keys}, or q to quit.", style="yellow")
                continue
            try:
                move = self.move(rnd, box, action, words[1:])
                rnd.check(move)
                self.afford(rnd, move)
                rnd.apply(move)
            except InputError as exc:
                self.refuse(exc)
                continue
            self.narrate(rnd)
            return True

    def defaults(self, rnd: Round) -> None:
        """Let the round take its defaults (15.3, 10); the round must move on."""
        seen = len(rnd.events)
        rnd.apply_defaults()
        if len(rnd.events) == seen and not rnd.over:
            raise PontoonError(f"the round awaits no decision in phase {rnd.phase!r}")
        self.narrate(rnd)

    def offer(self, rnd: Round, box: Box, m: Move) -> str:
        text = f"{KEYS[m.action]} {m.action.replace('-', ' ')}"
        if m.action is Action.INSURE:
            text += f" ({dollars(rnd.insurable(box.number, YOU))})"
        return text

    def move(self, rnd: Round, box: Box, action: Action, rest: list[str]) -> Move:
        amount = None
        if rest:
            if action not in (Action.DOUBLE, Action.INSURE) or len(rest) > 1:
                raise InputError("only d (double) and i (insure) take an amount, like: d 2.50")
            amount = parse_dollars(rest[0])
        player = YOU if action in INSURANCE_ACTIONS else None
        return Move(action, box.number, player=player, amount=amount)

    def afford(self, rnd: Round, move: Move) -> None:
        """The table's own check: you can only stake money you have."""
        need = rnd.stake_of(move)
        left = self.bankroll + rnd.net(YOU)
        if need > left:
            raise InputError(
                f"not enough money to {move.action}: it takes {dollars(need)} and you have "
                f"{dollars(left)} off the table"
                + (" (type d AMOUNT to double for less)" if move.action is Action.DOUBLE else "")
            )

    def refuse(self, exc: InputError) -> None:
        word = "Refused" if isinstance(exc, IllegalAction) else "Not accepted"
        self.say((f"{word}: ", "bold yellow"), (str(exc), "yellow"))

    def absent(self, rnd: Round) -> None:
        """16.6 (15.9 at Blackjack): you are not there to act, so the round goes on under the
        absent-player procedure; insurance not taken is declined."""
        if rnd.over:
            return
        if rnd.rules.rule_book == "blackjack":
            how = "drawn while the hard total is 11 or less and stand (rule 15.9)"
        else:
            how = "drawn to 12 or more and stand (rule 16.6)"
        self.say(f"You have left during the round: your hands are {how}.", style="yellow")
        absent = Irregularity(Procedure.ABSENT, by=Role.SUPERVISOR)
        for _ in range(100):  # each step ends a box or takes a default
            if rnd.over:
                break
            if rnd.can_irregularity(absent):
                rnd.apply_irregularity(absent)
            else:
                self.defaults(rnd)
        self.narrate(rnd)
        if not rnd.over:
            raise PontoonError("the round could not be finished for an absent player (16.6)")

    def finish(self, rnd: Round) -> None:
        self.record()
        self.roundlog = None
        net = rnd.net(YOU)
        self.bankroll += net
        self.console.print()
        self.layout(rnd, final=True)
        self.say(
            ("Round net ", "bold"),
            (signed(net), _money_style(net)),
            f", bankroll {dollars(self.bankroll)}.",
        )

    # ------------------------------------------------------------------ the layout
    def hand_label(self, box: Box, index: int | None) -> str:
        if index is None:
            return f"Box {box.number} insurance"
        if len(box.hands) > 1:
            return f"Box {box.number} hand {index + 1}"
        return f"Box {box.number}"

    def layout(self, rnd: Round, final: bool = False) -> None:
        """The dealer's cards, every hand, and the money: the hole card stays hidden (8.5)."""
        self.record()
        rows: list[tuple[str, Text, str, Text]] = []
        hidden = 1 if rnd.hole is not None else 0
        dealer = self.total_text(rnd.dealer) if rnd.dealer else ""
        rows.append(("Dealer", self.cards(rnd.dealer, hidden), dealer, Text()))
        turn = rnd.to_act()
        playing = (
            (turn.box, turn.hand) if turn is not None and turn.kind is TurnKind.DECIDE else None
        )
        for box in rnd.order:
            for i, hand in enumerate(box.hands):
                w = hand.wager_of(YOU)
                status = Text(dollars(w.amount) if w else "")
                if hand.doubled:
                    status.append(" doubled")
                status.append("  ")
                status.append_text(self.hand_state(hand, w, playing == (box.number, i)))
                total_text = self.total_text(hand.cards, hand.from_split)
                rows.append((self.hand_label(box, i), self.cards(hand.cards), total_text, status))
            ins = box.insurance.get(YOU)
            if ins is not None:
                state = self.wager_result(ins, None) if ins.settled else Text("open")
                status = Text.assemble(dollars(ins.amount), "  ", state)
                rows.append((self.hand_label(box, None), Text(), "", status))
        wide = max(len(row[1].plain) for row in rows)
        for label, cards, tot, status in rows:
            line = Text(f"{label:<16}")
            line.append_text(cards)
            line.append(" " * (wide - len(cards.plain) + 2))
            line.append(f"{tot:<10}", style="bold")
            line.append_text(status)
            line.rstrip()
            self.console.print(line)
        if not final:
            on_table = sum(w.amount for w in self.open_wagers(rnd))
            self.say(
                f"Bankroll {dollars(self.bankroll + rnd.net(YOU))}, "
                f"on the table {dollars(on_table)}.",
                style="dim",
            )

    def open_wagers(self, rnd: Round) -> list[Wager]:
        """Your wagers still on the layout (not yet settled)."""
        out = [w for _, _, h in rnd.hands() for w in h.wagers if w.player == YOU]
        out += [w for box in rnd.order for p, w in box.insurance.items() if p == YOU]
        return [w for w in out if not w.settled]

    def hand_state(self, hand: Hand, w: Wager | None, playing: bool) -> Text:
        if w is not None and w.settled:
            return self.wager_result(w, hand)
        if hand.state is HandState.OPEN:
            return Text("<- to act", style="bold cyan") if playing else Text("waiting")
        return Text(
            {
                HandState.STOOD: "stands",
                HandState.NATURAL: f"{self.natural}, waits for the dealer",
                HandState.SUPER: "Super Bonus, paid at the end (11.2)",
                HandState.SURRENDERED: "surrendered, void if the dealer makes pontoon (9.4)",
            }.get(hand.state, hand.state)
        )

    def wager_result(self, w: Wager, hand: Hand | None) -> Text:
        odds = f" {w.odds.numerator}:{w.odds.denominator}" if w.odds is not None else ""
        if w.outcome is Outcome.WIN:
            word = f"won{odds}" if w.odds is not None else "won the Super Bonus"
        elif w.outcome is Outcome.LOSE:
            word = "bust, lost" if hand is not None and hard_total(hand.cards) > 21 else "lost"
        elif w.outcome is Outcome.PUSH:
            word = "stand-off"
        elif w.outcome is Outcome.SURRENDER:
            word = "surrendered"
        else:
            word = str(w.outcome)
        return Text.assemble(f"{word} ", (signed(w.net), _money_style(w.net)))

    # ------------------------------------------------------------------ what happened
    def narrate(self, rnd: Round, initial: bool = False) -> None:
        """Tell the new events: shuffles, the dealer's cards, your draws and every settlement."""
        self.record()
        events = rnd.events[self.shown :]
        self.shown = len(rnd.events)
        for e in events:
            if e.kind in ("deal", "reveal") and e.box is None:
                self.dealer_shown += 1
            text = self.event_text(rnd, e, initial)
            if text is not None:
                self.console.print(text)

    def event_text(self, rnd: Round, e: Event, initial: bool) -> Text | None:
        rule = f" (rule {e.rule})" if e.rule else ""
        if e.kind == "shuffle":
            why = {
                "7": "The dealer shuffles the shoe",
                "8.7": "The cutting card came out last round: the shoe is shuffled",
                "8.8": "The cutting card is next: the shoe is shuffled",
                "16.7": "The shoe ran out: the discard rack is shuffled into it",
            }.get(e.rule or "", "The shoe is shuffled")
            if e.detail:  # its commitment, a line of its own (a scripted shoe makes none)
                rule += f".\nThe shoe is committed to before its first card: SHA-256 {e.detail}"
            return Text(f"{why}{rule}.", style="dim")
        if e.kind == "disclose":
            digest = commitment_of(e.detail or "")
            return Text(
                f"The last shoe is revealed: its order and salt are in the record (SHA-256 "
                f"{digest}){rule}.",
                style="dim",
            )
        if e.kind == "burn":
            return Text(f"One card is burnt face down{rule}.", style="dim")
        if e.kind == "action" and e.detail == "peek":
            return Text(f"The dealer peeks at the hole card{rule}.")
        if e.kind in ("deal", "reveal") and e.box is None:
            if (initial and e.kind == "deal") or e.card is None:
                return None
            cards = rnd.dealer[: self.dealer_shown]
            verb = {"reveal": "turns up the hole card", "deal": "draws"}[e.kind]
            if e.kind == "deal" and e.rule == "8.5":
                verb = "takes the second card"
            return Text.assemble(
                f"Dealer {verb} ",
                self.card(Card.parse(e.card)),
                f": {self.total_text(cards)}{rule}.",
            )
        if e.kind == "deal" and e.box is not None and e.card is not None and not initial:
            box = rnd.boxes[e.box]
            return Text.assemble(
                f"{self.hand_label(box, e.hand)} draws ", self.card(Card.parse(e.card)), "."
            )
        if e.kind == "outcome" and e.box is not None:
            return self.outcome_text(rnd, e, rule)
        return None

    def outcome_text(self, rnd: Round, e: Event, rule: str) -> Text | None:
        box = rnd.boxes[e.box] if e.box is not None else None
        if box is None or e.player != YOU:
            return None
        if e.hand is None:
            w = box.insurance.get(YOU)
            what = ""
        else:
            hand = box.hands[e.hand] if e.hand < len(box.hands) else None
            w = hand.wager_of(YOU) if hand is not None else None
            what = self.total_text(hand.cards, hand.from_split) if hand else ""
        if w is None:
            return None
        odds = f" {e.odds}" if e.odds else ""
        verbs = {
            "win": f"wins{odds}",
            "lose": "loses",
            "bust": "is bust, loses",
            "push": "stands off, wager returned",
            "surrender": "is surrendered",
        }
        verb = verbs.get(e.detail or "", e.detail or "")
        if e.detail == "win" and not odds:
            verb = "wins the Super Bonus"
        subject = self.hand_label(box, e.hand) + (f" ({what})" if what else "")
        if e.detail == "bust":
            subject, verb = self.hand_label(box, e.hand), f"busts with {what[5:]}, loses"
        style = _money_style(w.net)
        return Text.assemble(f"{subject} {verb}: ", (signed(w.net), style), f"{rule}.")


def _money_style(cents: int) -> str:
    return "bold green" if cents > 0 else "bold red" if cents < 0 else "yellow"


def _isatty(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def play(rules: RuleSet, args: argparse.Namespace) -> int:
    """Play at a table in the terminal until you leave, the input ends, the bankroll falls
    below the table minimum or ``args.rounds`` rounds are played. Returns the exit status."""
    boxes = getattr(args, "boxes", 1)
    if not isinstance(boxes, int) or not 1 <= boxes <= rules.boxes_per_player:
        raise InputError(f"--boxes must be 1 to {rules.boxes_per_player} (rule 15.4)")
    wager = getattr(args, "wager", None)
    if wager is not None and not rules.table_min <= wager <= rules.table_max:
        raise InputError(
            f"--wager must be {rules.table_min} to {rules.table_max} cents (rules 15.2, 15.6)"
        )
    if getattr(args, "bankroll", 0) < 0:
        raise InputError("--bankroll must not be negative")
    rounds = getattr(args, "rounds", None)
    if rounds is not None and rounds < 0:
        raise InputError("--rounds must not be negative")
    console = Console(highlight=False, emoji=False, soft_wrap=True)
    table = Table(rules, args, console)
    db = getattr(args, "db", None)
    if db is None:
        return table.run()
    from pontoon.store.cli import store_keys
    from pontoon.store.session import TerminalRecorder

    keys = store_keys(args)
    recorder = TerminalRecorder(db, getattr(args, "table", None) or "terminal", rules, YOU, **keys)
    try:
        table.attach(recorder)
        return table.run()
    finally:
        recorder.close()


__all__ = ["Table", "play"]
