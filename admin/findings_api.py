"""The findings workflow over `/api/findings` (list, acknowledge, assign, notes) and a
transfer's provider checks at `/api/transfers/{reference}/checks`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.api import DEFAULT_PAGE, json_body
from admin.errors import MissingFindingsError, QueryError, UnknownOperatorError
from admin.identity import audit, current_operator
from admin.operator_names import is_operator
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction
from ledger.checks import CURSOR_KIND as CHECK_CURSOR
from ledger.checks import check_dict, list_checks
from ledger.db import read_session, write_session
from ledger.errors import NoteError, NumberInputError
from ledger.events.findings import acknowledge_finding
from ledger.finding_queue import CURSOR_KIND as QUEUE_CURSOR
from ledger.finding_queue import UNASSIGNED, FindingFilter, finding_item, list_queue
from ledger.findings import add_note, assign_finding, check_note
from ledger.money import whole_number_from_text
from ledger.queries import MAX_PAGE, MAX_ROW_ID, decode_cursor, find_transfer
from ledger.types import FindingKind, FindingState, takes_text, utcnow
from web.answers import json_error

# Several findings acknowledged at once, in one transaction: enough for a day's queue, small
# enough that one request cannot hold the table for long.
MAX_BULK_ACK = 200


def _limit_and_cursor(query: Any, kind: str) -> tuple[int, str | None]:
    try:
        limit = whole_number_from_text(
            query.get("limit", str(DEFAULT_PAGE)), minimum=1, maximum=MAX_PAGE
        )
    except NumberInputError as exc:
        raise QueryError("limit", str(exc)) from None
    cursor = query.get("cursor") or None
    if cursor is not None:
        try:
            decode_cursor(cursor, kind=kind)
        except ValueError:
            raise QueryError("cursor", "is not a cursor this API gave out") from None
    return limit, cursor


def parse_finding_filter(query: Any) -> FindingFilter:
    """`state`, `kind`, `assignee` of the queue; QueryError naming the first bad one."""
    raw_state = query.get("state") or None
    try:
        state = None if raw_state is None else FindingState(raw_state)
    except ValueError:
        raise QueryError("state", f"must be one of {', '.join(FindingState)}") from None
    kind = query.get("kind") or None
    if kind not in (None, *FindingKind):
        raise QueryError("kind", "must be a finding kind")
    assignee = query.get("assignee") or None
    if assignee is not None and (len(assignee) > 100 or not takes_text(assignee)):
        raise QueryError("assignee", "must be an operator name or " + UNASSIGNED)
    return FindingFilter(state=state, kind=kind, assignee=assignee)


def finding_id_of(text: str) -> int:
    """A finding id from a path or a body; QueryError when it is not a positive row id."""
    try:
        return whole_number_from_text(text, minimum=1, maximum=MAX_ROW_ID)
    except NumberInputError as exc:
        raise QueryError("id", str(exc)) from None


async def list_findings(request: Request) -> Response:
    """`GET /api/findings?state=&kind=&assignee=&cursor=&limit=`."""
    try:
        where = parse_finding_filter(request.query_params)
        limit, cursor = _limit_and_cursor(request.query_params, QUEUE_CURSOR)
    except QueryError as exc:
        return json_error(400, "invalid_query", str(exc), parameter=exc.parameter)

    def load() -> dict[str, Any]:
        with read_session(request.app.state.engine) as session:
            page = list_queue(session, where, limit=limit, cursor=cursor)
            return {"items": page.items, "next_cursor": page.next_cursor}

    try:
        return JSONResponse(await run_in_threadpool(load))
    except DATABASE_ERRORS:
        return database_unavailable()


async def _note_of(request: Request) -> str | Response:
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    return _checked_note(body)


def _checked_note(body: dict[str, Any]) -> str | Response:
    """The body's `note`, checked, or the 422 that says what is wrong with it."""
    note = body.get("note")
    if not isinstance(note, str):
        return json_error(422, "invalid", "note must be a string", field="note")
    try:
        return check_note(note)
    except NoteError as exc:
        return json_error(422, "invalid", str(exc), field="note")


def acknowledge_all(
    session: Session, request: Request, ids: list[int], note: str
) -> list[dict[str, Any]]:
    """Acknowledge every finding of `ids` with one note, audited; MissingFindingsError (the
    caller's transaction rolls back, so nothing changed) when one does not exist."""
    operator = current_operator(request)
    now = utcnow()
    missing = []
    for finding_id in ids:
        finding = acknowledge_finding(
            session, finding_id=finding_id, note=note, now=now, author=operator.name
        )
        if finding is None:
            missing.append(finding_id)
            continue
        audit(request, session, AuditAction.FINDING_ACK, f"finding:{finding_id}", note)
    if missing:
        raise MissingFindingsError(missing)
    items = [finding_item(session, finding_id) for finding_id in ids]
    return [item for item in items if item is not None]


def assign_one(session: Session, request: Request, finding_id: int, assignee: str | None) -> None:
    """Give the finding to `assignee` (None: nobody), audited; UnknownOperatorError for a name
    no operator has, MissingFindingsError when there is no such finding."""
    if assignee is not None and not is_operator(session, assignee):
        raise UnknownOperatorError(f"no operator is named {assignee!r}")
    if assign_finding(session, finding_id=finding_id, assignee=assignee, now=utcnow()) is None:
        raise MissingFindingsError([finding_id])
    subject = f"finding:{finding_id}"
    audit(request, session, AuditAction.FINDING_ASSIGN, subject, assignee or "nobody")


def note_one(session: Session, request: Request, finding_id: int, text: str) -> None:
    """Add the operator's note (checked: NoteError), audited; MissingFindingsError when there
    is no such finding."""
    author = current_operator(request).name
    if add_note(session, finding_id=finding_id, author=author, note=text, now=utcnow()) is None:
        raise MissingFindingsError([finding_id])
    audit(request, session, AuditAction.FINDING_NOTE, f"finding:{finding_id}", text.strip())


async def _write(
    request: Request, change: Callable[[Session], Any], *, created: bool = False
) -> Response:
    def store() -> Any:
        with write_session(request.app.state.engine) as session:
            return change(session)

    try:
        result = await run_in_threadpool(store)
    except MissingFindingsError as exc:
        return json_error(404, "not_found", f"{exc}; nothing changed", ids=exc.ids)
    except UnknownOperatorError as exc:
        return json_error(400, "unknown_operator", str(exc), field="assignee")
    except DATABASE_ERRORS:
        return database_unavailable()
    return JSONResponse(result, status_code=201 if created else 200)


async def ack_one(request: Request) -> Response:
    """`POST /api/findings/{id}/ack {"note"}`."""
    try:
        finding_id = finding_id_of(request.path_params["id"])
    except QueryError as exc:
        return json_error(400, "invalid_id", str(exc), parameter="id")
    note = await _note_of(request)
    if isinstance(note, Response):
        return note
    return await _write(request, lambda s: acknowledge_all(s, request, [finding_id], note)[0])


async def ack_many(request: Request) -> Response:
    """`POST /api/findings/ack {"ids": [...], "note"}`: all or nothing; duplicates ignored."""
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    raw_ids = body.get("ids")
    if not isinstance(raw_ids, list) or not raw_ids:
        return json_error(422, "invalid", "ids must be a non-empty list", field="ids")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in raw_ids) or not all(
        1 <= i <= MAX_ROW_ID for i in raw_ids
    ):
        return json_error(422, "invalid", "ids must be positive whole numbers", field="ids")
    ids = list(dict.fromkeys(raw_ids))
    if len(ids) > MAX_BULK_ACK:
        return json_error(422, "invalid", f"at most {MAX_BULK_ACK} findings at once", field="ids")
    note = _checked_note(body)
    if isinstance(note, Response):
        return note
    return await _write(request, lambda s: {"items": acknowledge_all(s, request, ids, note)})


async def assign(request: Request) -> Response:
    """`POST /api/findings/{id}/assign {"assignee"}`: null unassigns; 400 for an unknown name."""
    try:
        finding_id = finding_id_of(request.path_params["id"])
    except QueryError as exc:
        return json_error(400, "invalid_id", str(exc), parameter="id")
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    if "assignee" not in body:
        return json_error(422, "invalid", "assignee is required (null unassigns)", field="assignee")
    assignee = body["assignee"]
    if assignee is not None and not isinstance(assignee, str):
        return json_error(422, "invalid", "assignee must be a string or null", field="assignee")

    def change(session: Session) -> Any:
        assign_one(session, request, finding_id, assignee)
        return finding_item(session, finding_id)

    return await _write(request, change)


async def note(request: Request) -> Response:
    """`POST /api/findings/{id}/notes {"note"}`: 201 with the finding and its notes."""
    try:
        finding_id = finding_id_of(request.path_params["id"])
    except QueryError as exc:
        return json_error(400, "invalid_id", str(exc), parameter="id")
    text = await _note_of(request)
    if isinstance(text, Response):
        return text

    def change(session: Session) -> Any:
        note_one(session, request, finding_id, text)
        return finding_item(session, finding_id)

    return await _write(request, change, created=True)


async def transfer_checks(request: Request) -> Response:
    """`GET /api/transfers/{reference}/checks?cursor=&limit=`: newest first."""
    reference = request.path_params["reference"]
    try:
        limit, cursor = _limit_and_cursor(request.query_params, CHECK_CURSOR)
    except QueryError as exc:
        return json_error(400, "invalid_query", str(exc), parameter=exc.parameter)

    def load() -> dict[str, Any] | None:
        with read_session(request.app.state.engine) as session:
            transfer = None if not takes_text(reference) else find_transfer(session, reference)
            if transfer is None or transfer.id is None:
                return None
            page = list_checks(session, transfer_id=transfer.id, limit=limit, cursor=cursor)
            return {
                "reference": transfer.reference,
                "items": [check_dict(c) for c in page.items],
                "next_cursor": page.next_cursor,
            }

    try:
        result = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return database_unavailable()
    if result is None:
        return json_error(404, "not_found", f"no transfer with reference {reference!r}")
    return JSONResponse(result)
