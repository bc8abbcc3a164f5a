"""Statement matching in every reconcile pass (docs/rules.md "Matching": a line can arrive
before its transfer is final): the open lines are decided again, newest first, a bounded
number per pass, through the same indexes as an import."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from sqlalchemy import Engine

from ledger.db import write_session
from reconcile.statements.facts import load_accounts
from reconcile.statements.matcher import reconsider_open
from statements.matching import DEFAULT_DATE_WINDOW

# Open lines decided again per pass: a pass stays short whatever the backlog of unmatched
# lines (the newest first: they are the likeliest to have found their transfer).
MAX_PASS_LINES = 2_000


def match_statements(engine: Engine, settings: Any, *, now: dt.datetime) -> dict[str, int]:
    """Decide the open statement lines again; what changed, for `reconcile once --json`
    (`considered`, and how many lines became `matched`, `suggested`, `unmatched`, and the
    `reversals` seen)."""
    window = getattr(settings, "statement_date_window", DEFAULT_DATE_WINDOW)
    counts: Counter[str] = Counter()
    with write_session(engine) as session:
        accounts = load_accounts(session)
        if not accounts.kinds:
            return {}
        considered = reconsider_open(
            session, accounts, window=window, limit=MAX_PASS_LINES, now=now
        )
        if considered is None:
            return {}
        counts["considered"] = len(considered.stored)
        for decision in considered.stored.values():
            if decision.changed:
                counts[str(decision.state)] += 1
        counts["reversals"] = len(considered.matching.reversals)
    return {
        key: counts[key] for key in ("considered", "matched", "suggested", "unmatched", "reversals")
    }
