"""Opening a table only as the house left it, and sealing and signing a store again.

:func:`table_state` is every writer's way into a table: the table's head must be covered by
a genuine signature of this store (:mod:`pontoon.store.heads`) that says where its shoe
stands, and the stored shoe must open under the shoe keys as sealed for this table at that
write (:mod:`pontoon.store.secret`). Anything else is refused with the table's name and the
reason, and nothing is dealt. :func:`rekey` seals and signs everything again under the first
keys, checking each table first, so that a rotation never launders a change.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, insert, select, update

from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.store.chain import GENESIS
from pontoon.store.chain import now as chain_now
from pontoon.store.commitments import LOST
from pontoon.store.db import Store, TableState
from pontoon.store.heads import Head, Signed, check, digest
from pontoon.store.heads import Shoe as ShoeMark
from pontoon.store.house import HOUSE, append
from pontoon.store.schema import shoe_states, signatures, tables
from pontoon.store.secret import PREFIX, SealError, WrongKeyError
from pontoon.store.shoestate import advance
from pontoon.vocab import EventKind

if TYPE_CHECKING:
    from pontoon.store.signing import PublicKeys

_MORE = "pontoon verify says more; the table is not opened"


class RecordError(InputError):
    """A table whose record or shoe is not as the house signed and sealed it: not opened."""


def table_state(store: Store, table: str) -> TableState | None:
    """What a writer needs to go on appending to ``table`` (:meth:`Store.table_state`) with
    its shoe, once the head and the shoe check; a :class:`RecordError` saying why not."""
    state = store.table_state(table)
    if state is None:
        return None
    with store.read() as conn:
        mark, text = open_table(store, conn, table)
    if mark is not None and text is not None:  # whole at mark[0], then cards drawn since
        state.shoe, state.shoe_mark = (mark[1], advance(text, mark[2])), mark
    return state


def check_tables(store: Store, names: list[str]) -> None:
    """That each table of ``names`` opens (a server checks before it listens): else the
    :class:`RecordError` its start would meet."""
    for name in names:
        table_state(store, name)


def signed_row(conn: Connection, sid: str | None) -> Signed | None:
    if sid is None:
        return None
    row = conn.execute(select(signatures).where(signatures.c.id == sid)).first()
    return None if row is None else Signed(*(str(v) for v in row))


def stored_head(conn: Connection, table: str) -> tuple[Head, str | None, str | None]:
    """The table's head as stored (with where its shoe stands), its sealed shoe, its
    signature's id."""
    c = tables.c
    row = conn.execute(
        select(c.head_seq, c.head_hash, c.shoe_seq, c.shoe_drawn, c.signed).where(c.id == table)
    ).one()
    shoe = conn.execute(
        select(shoe_states.c.seq, shoe_states.c.state).where(shoe_states.c.table_id == table)
    ).first()
    mark = None
    if shoe is not None:
        whole = int(shoe[0])
        moved = whole if row.shoe_seq is None else int(row.shoe_seq)  # (null: before 0009)
        drawn = 0 if row.shoe_seq is None else int(row.shoe_drawn)
        mark = (whole, moved, drawn, digest(str(shoe[1])))
    head = Head(table, int(row.head_seq), str(row.head_hash), mark)
    return head, None if shoe is None else str(shoe[1]), row.signed


def open_table(store: Store, conn: Connection, table: str) -> tuple[ShoeMark | None, str | None]:
    """(where the table's shoe stands, its plain text) once the head and the shoe check; a
    :class:`RecordError` otherwise."""
    head, sealed, sid = stored_head(conn, table)
    wrong = check(store.record_keys.public(), store.store_id, head, signed_row(conn, sid))
    if wrong:
        raise RecordError(f"table {table!r}: {wrong} ({_MORE})")
    if sealed is None or head.shoe is None:
        return None, None
    try:
        return head.shoe, store.shoe_keys.open(sealed, table, head.shoe[0])
    except WrongKeyError as exc:
        raise RecordError(
            f"the shoe of table {table!r} is sealed under another key ({exc}): give its key "
            f"with --shoe-key-file or $PONTOON_SHOE_KEY (it stays stored until then)"
        ) from None
    except SealError as exc:
        raise RecordError(f"the shoe of table {table!r}: {exc}: it is never dealt") from None


def _ever_signed(conn: Connection, table: str) -> bool:
    """Whether any signature names ``table`` (its body's key ``"TABLE":{"hash"``)."""
    key = json.dumps(table, ensure_ascii=False) + ':{"hash"'
    pattern = "%" + key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    found = conn.execute(
        select(signatures.c.id).where(signatures.c.body.like(pattern, escape="\\")).limit(1)
    ).first()
    return found is not None


def rekey(
    store: Store, discard: frozenset[str] = frozenset(), also: PublicKeys | None = None
) -> tuple[int, int]:
    """Every table's shoe sealed again under the first shoe key and every head signed again
    under the first record key, in one transaction: (shoes, heads). A table whose signed head
    or sealed shoe does not check refuses the whole (:class:`RecordError`, nothing changed).
    A table recorded before heads were signed is signed as it stands, its shoe sealed for it
    (a clear shoe too), and the house's rows recorded as they stand: once, as its store is
    upgraded. The tables named in ``discard`` lose their shoe instead (its key lost for good):
    each starts a new shoe, its open round voided (16.5). ``also``: more public keys to check
    the heads with (those of a record key that was lost)."""
    with store.write() as conn:
        shoes, heads, signed = _rekey(store, conn, chain_now(), discard, also)
    store.anchor(signed)
    return shoes, heads


def _rekey(
    store: Store,
    conn: Connection,
    at: str,
    discard: frozenset[str],
    also: PublicKeys | None,
) -> tuple[int, int, list[Signed]]:
    keys, public = store.shoe_keys, store.record_keys.public()
    if also is not None:  # (the public keys of a lost record key, say)
        public = public | also
    names = sorted(str(t) for t in conn.execute(select(tables.c.id)).scalars())
    unknown = sorted(discard - set(names))
    if unknown:
        raise RecordError(f"rekey: no table {unknown[0]!r} to discard the shoe of")
    heads: list[Head] = []
    shoes = 0
    for table in names:
        head, sealed, sid = stored_head(conn, table)
        if sid is None:  # recorded before heads were signed: taken as it stands, once
            if _ever_signed(conn, table):
                raise RecordError(
                    f"rekey: table {table!r}: its head names no signature, but heads of it were "
                    f"signed before (the record was changed; {_MORE}); nothing was changed"
                )
        else:
            wrong = check(public, store.store_id, head, signed_row(conn, sid))
            if wrong:
                raise RecordError(f"rekey: table {table!r}: {wrong}; nothing was changed")
        if table in discard:
            conn.execute(delete(shoe_states).where(shoe_states.c.table_id == table))
            # the record says the shoe was set aside unrevealed, and why
            lost = Event(EventKind.DISCLOSE, rule=LOST, by="rekey")
            seq, last = append(conn, table, head.seq, head.hash, [lost], at)
            head = Head(table, seq, last)
            conn.execute(
                update(tables)
                .where(tables.c.id == table)
                .values(head_seq=seq, head_hash=last, shoe_seq=None, shoe_drawn=0)
            )
        elif sealed is not None and head.shoe is not None:
            whole = head.shoe[0]
            try:
                if sid is None and not sealed.startswith(PREFIX):
                    text = sealed  # a clear shoe of a store from before the seal
                else:
                    bound, text = keys.unseal(sealed)
                    if bound != (table, whole) and not (sid is None and bound is None):
                        raise SealError(f"it is sealed for {bound}, not ({table!r}, {whole})")
            except SealError as exc:
                raise RecordError(
                    f"rekey: the shoe of table {table!r}: {exc}; nothing was changed"
                ) from None
            state = keys.seal(text, table, whole)
            conn.execute(
                update(shoe_states).where(shoe_states.c.table_id == table).values(state=state)
            )
            head = head._replace(shoe=(*head.shoe[:3], digest(state)))
            shoes += 1
        heads.append(head)
    adopted = _adopt(store, conn, at) if HOUSE not in names else None
    if not heads:
        return 0, 0, [] if adopted is None else [adopted]
    signed = store.sign_and_insert(conn, heads, at)
    for head in heads:
        values: dict[str, object] = {"signed": signed.id}
        if head.shoe is not None:
            values |= {"shoe_seq": head.shoe[1], "shoe_drawn": head.shoe[2]}
        conn.execute(update(tables).where(tables.c.id == head.table).values(values))
    return shoes, len(heads), [signed] if adopted is None else [signed, adopted]


def _adopt(store: Store, conn: Connection, at: str) -> Signed | None:
    """A store from before the house's record: its money and control rows recorded as they
    stand, once (refused when a signature names the house's chain already: someone removed
    it to pass changed rows off as old)."""
    from pontoon.store.house import Recording, is_setting
    from pontoon.store.schema import accounts, play_limits, staff_actions, wallet_entries

    if _ever_signed(conn, HOUSE):
        raise RecordError(
            "rekey: the house's record is gone, but signatures name it (the record was "
            f"changed; {_MORE}); nothing was changed"
        )
    rec = Recording(conn)
    for table in (accounts, wallet_entries, play_limits, staff_actions):
        for row in conn.execute(select(table)):
            data = row._asdict()
            if table is wallet_entries and data["table_id"] is not None:
                continue
            if table is staff_actions and not is_setting(str(data["action"])):
                continue
            rec.note(table, data)
    if not rec.events:
        return None
    conn.execute(insert(tables).values(id=HOUSE, created_at=at, head_seq=0, head_hash=GENESIS))
    return rec.chain(store, at)


__all__ = [
    "RecordError",
    "check_tables",
    "open_table",
    "rekey",
    "signed_row",
    "stored_head",
    "table_state",
]
