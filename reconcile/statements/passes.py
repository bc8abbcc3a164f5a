"""Statement matching in every reconcile pass (docs/rules.md "Matching": a line can arrive
before its transfer is final): the open lines are decided again, newest first, a bounded
number per pass, through the same indexes as an import."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from sqlalchemy import Engine, text
from sqlmodel import Session

from ledger.db import write_session
from reconcile.statements.facts import load_accounts
from reconcile.statements.findings import after_pass
from reconcile.statements.matcher import reconsider_open
from statements.facts import SubjectKind
from statements.matching import DEFAULT_DATE_WINDOW

# Open lines decided again per pass: a pass stays short whatever the backlog of unmatched
# lines (the newest first: they are the likeliest to have found their transfer).
MAX_PASS_LINES = 2_000
# The subjects whose status changed in the last passes are checked against the statements:
# those of at least this many seconds back (twice the poll interval when that is longer), so
# a pass that ran late misses none; checking one twice changes nothing.
STATUS_LOOKBACK_MIN = 120.0

# The reversal credits still pending whose transfer is now a confirmed success: the partial
# index `ix_statement_line_reversal_pending` (migration 0017) holds only the pending lines.
_PENDING_REVERSALS = text(
    "SELECT l.id FROM statement_line l JOIN transfer t ON t.id = l.transfer_id "
    "WHERE l.reversal_pending AND t.status = 'successful' AND t.confirmed "
    "ORDER BY l.id LIMIT :limit"
)


def pending_reversals(session: Session, *, limit: int = MAX_PASS_LINES) -> list[int]:
    """The lines read as a reversal before their transfer was confirmed successful, whose
    transfer is confirmed successful now: the pass applies them (docs/rules.md "Reversals")."""
    return [int(row[0]) for row in session.execute(_PENDING_REVERSALS, {"limit": limit})]


def match_statements(engine: Engine, settings: Any, *, now: dt.datetime) -> dict[str, int]:
    """Decide the open statement lines again; what changed, for `reconcile once --json`
    (`considered`, and how many lines became `matched`, `suggested`, `unmatched`, and the
    `reversals` seen), then the statement findings of what changed
    (`reconcile.statements.findings.after_pass`)."""
    window = getattr(settings, "statement_date_window", DEFAULT_DATE_WINDOW)
    counts: Counter[str] = Counter()
    with write_session(engine) as session:
        accounts = load_accounts(session)
        if not accounts.kinds:
            return {}
        considered = reconsider_open(
            session, accounts, window=window, limit=MAX_PASS_LINES, now=now
        )
        changed: list[int] = []
        subjects: set[tuple[SubjectKind, int]] = set()
        reversal_lines: list[int] = []
        if considered is not None:
            counts["considered"] = len(considered.stored)
            before = {line.id: line for line in considered.context}
            for decision in considered.stored.values():
                if decision.changed:
                    counts[str(decision.state)] += 1
                    changed.append(decision.line)
                    old = before.get(decision.line)
                    for match in (decision.match, None if old is None else old.match):
                        if match is not None and match.subject in considered.subjects.ids:
                            key = (match.subject.kind, considered.subjects.ids[match.subject])
                            subjects.add(key)
            reversal_lines = [r.line for r in considered.matching.reversals if r.line]
        # A credit matched as a reversal while its transfer was not yet confirmed keeps its
        # flag and is no longer open: it is applied once the transfer is confirmed.
        reversal_lines = sorted(set(reversal_lines) | set(pending_reversals(session)))
        counts["reversals"] = len(reversal_lines)
        poll = float(getattr(settings, "poll_interval", 30))
        since = now - dt.timedelta(seconds=max(2 * poll, STATUS_LOOKBACK_MIN))
        found = after_pass(
            session,
            changed_lines=changed,
            reversal_lines=reversal_lines,
            subjects=subjects,
            since=since,
            window=window,
            now=now,
        )
        counts["findings_raised"] = sum(found.raised.values())
        counts["findings_resolved"] = sum(found.resolved.values())
    keys = ("considered", "matched", "suggested", "unmatched", "reversals")
    done = {key: counts[key] for key in keys} if considered is not None else {}
    return done | {key: counts[key] for key in ("findings_raised", "findings_resolved")}
