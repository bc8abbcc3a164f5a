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
from admin.actions.actor import Actor
from admin.actions.findings import MAX_BULK_ACK
from admin.console.pages import PAGE_SIZE
from admin.console.render import back_to, page_link, render
from admin.errors import (
    InvalidError,
    MissingFindingsError,
    QueryError,
    UnknownOperatorError,
)
from admin.findings_api import finding_id_of, parse_finding_filter
from admin.shell import actor_of, engine_of, in_thread
from ledger.db import read_session, write_session
from ledger.finding_queue import CURSOR_KIND, UNASSIGNED, FindingFilter, list_queue
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


async def findings_page(request: Request) -> Response:
    """`/console/findings`: the queue, filtered by state, kind and assignee, newest first."""
    query = request.query_params
    given: dict[str, str | None] = {
        name: (query.get(name) or "").strip() or None
        for name in ("state", "kind", "assignee", "cursor")
    }
    if "state" not in query:
        given["state"] = FindingState.OPEN.value  # the day's work by default
    problems = []
    try:
        where = parse_finding_filter(given)
    except QueryError as exc:
        problems.append(f"Filter {exc}.")
        where = FindingFilter(state=FindingState.OPEN)
        given.update(state=FindingState.OPEN.value, kind=None, assignee=None)
    cursor = given["cursor"]
    if cursor is not None:
        try:
            decode_cursor(cursor, kind=CURSOR_KIND)
        except ValueError:
            problems.append("That page link is not valid any more; showing the first page.")
            cursor = given["cursor"] = None

    def load() -> Any:
        with read_session(engine_of(request)) as session:
            return list_queue(session, where, limit=PAGE_SIZE, cursor=cursor)

    page = await in_thread(load)
    here = page_link(QUEUE, given, cursor=cursor)
    return render(
        request,
        "findings.html",
        title="Findings",
        items=page.items,
        given=given,
        problems=problems,
        states=list(FindingState),
        kinds=list(FindingKind),
        unassigned=UNASSIGNED,
        back=here,
        max_bulk=MAX_BULK_ACK,
        next_link=None
        if page.next_cursor is None
        else page_link(QUEUE, given, cursor=page.next_cursor),
    )


# The banner (admin.console.render.ERROR_BANNERS) for each refusal of a findings action.
def _banner(exc: Exception) -> str:
    if isinstance(exc, MissingFindingsError):
        return "missing_findings"
    if isinstance(exc, UnknownOperatorError):
        return "unknown_operator"
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
