"""The findings queue page and its forms: acknowledge one or many with one note, assign, note.

Each form posts back here and is answered with a redirect (POST/redirect/GET) to the page it
came from, with what was done or what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlmodel import Session
from starlette.requests import Request
from starlette.responses import Response

from admin.actions import findings as actions
from admin.actions import findings_bulk as bulk
from admin.actions.actor import Actor, Role
from admin.actions.findings import MAX_BULK_ACK
from admin.actions.findings_bulk import MAX_BULK, CountChangedError
from admin.console.finding_advice import queue_advice
from admin.console.pages import PAGE_SIZE
from admin.console.render import back_to, page_link, render
from admin.errors import (
    InvalidError,
    MissingFindingsError,
    QueryError,
    UnknownOperatorError,
)
from admin.findings_api import (
    FILTER_KEYS,
    SORTS,
    finding_id_of,
    load_queue,
    parse_finding_filter,
)
from admin.identity import current_operator
from admin.shell import actor_of, engine_of, in_thread
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.finding_queue import (
    COUNTED_STATES,
    CURSOR_KIND,
    UNASSIGNED,
    FindingFilter,
    counted,
    unresolved_states,
)
from ledger.finding_stakes import TooManyToSortError, decode_amount_cursor
from ledger.money import whole_number_from_text
from ledger.queries import decode_cursor
from ledger.types import FindingKind, FindingState, utcnow
from web.errors import WebError
from web.forms import read_form_fields

QUEUE = "/console/findings"
MAX_FORM_BYTES = 64 * 1024


async def form_fields(request: Request) -> dict[str, list[str]]:
    """The posted form's fields (every value of each); empty when it cannot be read."""
    # The guard (admin.identity.page) has already read the body with its deadline to check the
    # CSRF field: this reads the same bytes again.
    try:
        return (await read_form_fields(request, limit=MAX_FORM_BYTES))[1]
    except WebError:
        return {}


def _back(fields: dict[str, list[str]]) -> str:
    # Only back to a console page of ours: never an open redirect to another site.
    back = (fields.get("back") or [QUEUE])[-1]
    if not back.startswith("/console") or "//" in back or "\\" in back:
        return QUEUE
    return back


def _one(fields: dict[str, list[str]], name: str) -> str:
    return (fields.get(name) or [""])[-1]


def _link(given: dict[str, str | None], **changes: str | None) -> str:
    """The queue with these filters, some changed; `state=` stays in the link when it is empty
    ("any"), since a link without it opens on the open findings."""
    link = page_link(QUEUE, given, **changes)
    if {**given, **changes}.get("state"):
        return link
    return link + ("&" if "?" in link else "?") + "state="


def _valid_cursor(cursor: str, sort: str | None) -> bool:
    try:
        if sort == "amount":
            decode_amount_cursor(cursor)
        else:
            decode_cursor(cursor, kind=CURSOR_KIND)
    except ValueError:
        return False
    return True


async def findings_page(request: Request) -> Response:
    """`/console/findings`: the queue, filtered by state, kind, assignee and reference prefix,
    newest first or largest amount at stake first, with its totals and the bulk forms."""
    query = request.query_params
    given: dict[str, str | None] = {
        name: (query.get(name) or "").strip() or None
        for name in ("state", "kind", "assignee", "reference", "sort", "cursor")
    }
    if "state" not in query:
        given["state"] = FindingState.OPEN.value  # the day's work by default
    problems = []
    try:
        where = parse_finding_filter(given)
    except QueryError as exc:
        problems.append(f"Filter {exc}.")
        where = FindingFilter(state=FindingState.OPEN)
        given.update(state=FindingState.OPEN.value, kind=None, assignee=None, reference=None)
    if given["sort"] not in (None, *SORTS):
        problems.append("Unknown order; showing the newest first.")
        given["sort"] = None
    cursor = given["cursor"]
    if cursor is not None and not _valid_cursor(cursor, given["sort"]):
        problems.append("That page link is not valid any more; showing the first page.")
        cursor = given["cursor"] = None
    finance = current_operator(request).role.allows(Role.FINANCE)

    def load() -> tuple[dict[str, Any], dict[str, int], dict[int, str]]:
        with read_session(engine_of(request)) as session:
            try:
                queue = load_queue(
                    session, where, sort=given["sort"] or "newest", limit=PAGE_SIZE, cursor=cursor
                )
            except TooManyToSortError as exc:
                problems.append(f"{exc}.")
                given.update(sort=None, cursor=None)
                queue = load_queue(session, where, sort="newest", limit=PAGE_SIZE, cursor=None)
            # What the bulk forms would change, from the summary's counts (same snapshot; the
            # action counts again and refuses a different number).
            counts = queue["counts"]
            open_only = (
                (FindingState.OPEN.value,) if where.state in (None, FindingState.OPEN) else ()
            )
            scope = {
                "ack": counted(counts, where, open_only),
                "assign": counted(counts, where, unresolved_states(where)),
            }
            return queue, scope if finance else {}, queue_advice(session, queue["items"])

    queue, scope, advice = await in_thread(load)
    here = _link(given, cursor=given["cursor"])
    items = queue["items"]
    return render(
        request,
        "findings.html",
        title="Findings",
        items=items,
        advice=advice,
        total=queue["total"],
        first=queue["offset"] + 1,
        last=queue["offset"] + len(items),
        counts=queue["counts"],
        counted_states=COUNTED_STATES,
        scope=scope,
        max_bulk_filter=MAX_BULK,
        given=given,
        filters={name: given[name] for name in FILTER_KEYS},
        problems=problems,
        states=list(FindingState),
        kinds=list(FindingKind),
        unassigned=UNASSIGNED,
        back=here,
        max_bulk=MAX_BULK_ACK,
        sort_links={
            "newest": _link(given, sort=None, cursor=None),
            "amount": _link(given, sort="amount", cursor=None),
        },
        count_link=lambda kind, state: _link({**given, "kind": kind, "state": state}, cursor=None),
        next_link=None
        if queue["next_cursor"] is None
        else _link(given, cursor=queue["next_cursor"]),
        first_link=_link(given, cursor=None) if given["cursor"] else None,
    )


# The banner (admin.console.render.ERROR_BANNERS) for each refusal of a findings action.
def _banner(exc: Exception) -> str:
    if isinstance(exc, MissingFindingsError):
        return "missing_findings"
    if isinstance(exc, UnknownOperatorError):
        return "unknown_operator"
    if isinstance(exc, CountChangedError):
        return "count_changed"
    if isinstance(exc, InvalidError) and exc.field == "filter":
        return "too_wide"
    if isinstance(exc, InvalidError) and exc.field == "ids":
        return "none_ticked" if "non-empty" in exc.message else "too_many"
    return "note_refused"


async def _apply(
    request: Request, back: str, done: str, change: Callable[[Session, Actor], object]
) -> Response:
    """Run the action in one transaction; back to the page with what was done or what was
    wrong (a database that does not answer is the console's 503 page, admin.answers)."""
    actor = actor_of(request)

    def store() -> None:
        with write_session(engine_of(request)) as session:
            change(session, actor)

    try:
        await in_thread(store)
    except (InvalidError, MissingFindingsError) as exc:
        return back_to(back, error=_banner(exc))
    return back_to(back, done=done)


async def work_matching(request: Request) -> Response:
    """POST `/console/findings/bulk`: `action` ack (with `note`) or assign (with `assign_to`)
    every finding the form's filter keeps, when they are still `expected_count` (the count
    the page showed on the button); otherwise nothing changes and the page shows the new count."""
    fields = await form_fields(request)
    back = _back(fields)
    action = _one(fields, "action")
    try:
        where = parse_finding_filter({name: _one(fields, name) for name in FILTER_KEYS})
        expected = whole_number_from_text(
            _one(fields, "expected_count"), minimum=0, maximum=MAX_BULK
        )
    except (QueryError, NumberInputError):
        return back_to(back, error="bad_bulk_form")
    if action not in ("ack", "assign"):
        return back_to(back, error="bad_bulk_form")
    actor = actor_of(request)
    engine = engine_of(request)
    note = _one(fields, "note")
    assignee = _one(fields, "assign_to").strip() or None  # `assignee` is the filter's

    def run() -> bulk.BulkResult:
        if action == "ack":
            return bulk.acknowledge_matching(
                engine, actor, where, expected_count=expected, note=note, now=utcnow()
            )
        return bulk.assign_matching(
            engine, actor, where, expected_count=expected, assignee=assignee, now=utcnow()
        )

    try:
        await in_thread(run)
    except (InvalidError, CountChangedError) as exc:
        return back_to(back, error=_banner(exc))
    return back_to(back, done="bulk_acknowledged" if action == "ack" else "bulk_assigned")


async def acknowledge(request: Request) -> Response:
    """POST `/console/findings/ack` (`ids` checked, one `note`): all or nothing."""
    fields = await form_fields(request)
    back = _back(fields)
    try:
        ids = list(dict.fromkeys(finding_id_of(raw) for raw in fields.get("ids", [])))
    except QueryError:
        return back_to(back, error="bad_finding_ids")
    note = _one(fields, "note")
    return await _apply(
        request,
        back,
        "acknowledged",
        lambda session, actor: actions.acknowledge(session, actor, ids, note, now=utcnow()),
    )


async def assign(request: Request) -> Response:
    """POST `/console/findings/{id}/assign` (`assignee`; empty unassigns)."""
    fields = await form_fields(request)
    back = _back(fields)
    try:
        finding_id = finding_id_of(request.path_params["id"])
    except QueryError:
        return back_to(back, error="bad_finding_id")
    assignee = _one(fields, "assignee").strip() or None
    return await _apply(
        request,
        back,
        "assigned",
        lambda session, actor: actions.assign(session, actor, finding_id, assignee, now=utcnow()),
    )


async def note(request: Request) -> Response:
    """POST `/console/findings/{id}/notes` (`note`)."""
    fields = await form_fields(request)
    back = _back(fields)
    try:
        finding_id = finding_id_of(request.path_params["id"])
    except QueryError:
        return back_to(back, error="bad_finding_id")
    text = _one(fields, "note")
    return await _apply(
        request,
        back,
        "noted",
        lambda session, actor: actions.note(session, actor, finding_id, text, now=utcnow()),
    )
