"""The findings workflow over `/api/findings` (list, acknowledge, assign, notes) and a
transfer's provider checks at `/api/transfers/{reference}/checks`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import findings as actions
from admin.actions.findings import MAX_BULK_ACK
from admin.api import DEFAULT_PAGE
from admin.errors import InvalidError, NotFoundError, QueryError
from admin.shell import actor_of, engine_of, in_thread, json_body
from ledger.checks import CURSOR_KIND as CHECK_CURSOR
from ledger.checks import check_dict, list_checks
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.finding_queue import CURSOR_KIND as QUEUE_CURSOR
from ledger.finding_queue import UNASSIGNED, FindingFilter, finding_item, list_queue
from ledger.money import whole_number_from_text
from ledger.queries import MAX_PAGE, MAX_ROW_ID, decode_cursor, find_transfer
from ledger.types import FindingKind, FindingState, takes_text, utcnow

__all__ = ["MAX_BULK_ACK"]


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
    """A finding id from a path or a body; QueryError (400 invalid_id) when it is not a
    positive row id."""
    try:
        return whole_number_from_text(text, minimum=1, maximum=MAX_ROW_ID)
    except NumberInputError as exc:
        raise QueryError("id", str(exc), code="invalid_id") from None


async def list_findings(request: Request) -> Response:
    """`GET /api/findings?state=&kind=&assignee=&cursor=&limit=`."""
    where = parse_finding_filter(request.query_params)
    limit, cursor = _limit_and_cursor(request.query_params, QUEUE_CURSOR)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            page = list_queue(session, where, limit=limit, cursor=cursor)
            return {"items": page.items, "next_cursor": page.next_cursor}

    return JSONResponse(await in_thread(load))


def _with_nothing_changed(exc: NotFoundError) -> NotFoundError:
    # The API says the whole request was rolled back.
    exc.message = f"{exc.message}; nothing changed"
    return exc


async def _acknowledged(request: Request, ids: list[int], note: object) -> list[dict[str, Any]]:
    actor = actor_of(request)
    text = actions.checked_note(note)

    def store() -> list[dict[str, Any]]:
        with write_session(engine_of(request)) as session:
            actions.acknowledge(session, actor, ids, text, now=utcnow())
            items = [finding_item(session, finding_id) for finding_id in ids]
            return [item for item in items if item is not None]

    try:
        return await in_thread(store)
    except NotFoundError as exc:
        raise _with_nothing_changed(exc) from None


async def ack_one(request: Request) -> Response:
    """`POST /api/findings/{id}/ack {"note"}`."""
    finding_id = finding_id_of(request.path_params["id"])
    body = await json_body(request)
    return JSONResponse((await _acknowledged(request, [finding_id], body.get("note")))[0])


async def ack_many(request: Request) -> Response:
    """`POST /api/findings/ack {"ids": [...], "note"}`: all or nothing; duplicates ignored."""
    body = await json_body(request)
    raw_ids = body.get("ids")
    if not isinstance(raw_ids, list) or not raw_ids:
        raise InvalidError("ids", "ids must be a non-empty list")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in raw_ids) or not all(
        1 <= i <= MAX_ROW_ID for i in raw_ids
    ):
        raise InvalidError("ids", "ids must be positive whole numbers")
    ids = list(dict.fromkeys(raw_ids))
    if len(ids) > MAX_BULK_ACK:
        raise InvalidError("ids", f"at most {MAX_BULK_ACK} findings at once")
    return JSONResponse({"items": await _acknowledged(request, ids, body.get("note"))})


async def assign(request: Request) -> Response:
    """`POST /api/findings/{id}/assign {"assignee"}`: null unassigns; 400 for an unknown name."""
    finding_id = finding_id_of(request.path_params["id"])
    body = await json_body(request)
    if "assignee" not in body:
        raise InvalidError("assignee", "assignee is required (null unassigns)")
    assignee = body["assignee"]
    if assignee is not None and not isinstance(assignee, str):
        raise InvalidError("assignee", "assignee must be a string or null")
    actor = actor_of(request)

    def change() -> Any:
        with write_session(engine_of(request)) as session:
            actions.assign(session, actor, finding_id, assignee, now=utcnow())
            return finding_item(session, finding_id)

    try:
        return JSONResponse(await in_thread(change))
    except NotFoundError as exc:
        raise _with_nothing_changed(exc) from None


async def note(request: Request) -> Response:
    """`POST /api/findings/{id}/notes {"note"}`: 201 with the finding and its notes."""
    finding_id = finding_id_of(request.path_params["id"])
    body = await json_body(request)
    text = actions.checked_note(body.get("note"))
    actor = actor_of(request)

    def change() -> Any:
        with write_session(engine_of(request)) as session:
            actions.note(session, actor, finding_id, text, now=utcnow())
            return finding_item(session, finding_id)

    try:
        return JSONResponse(await in_thread(change), status_code=201)
    except NotFoundError as exc:
        raise _with_nothing_changed(exc) from None


async def transfer_checks(request: Request) -> Response:
    """`GET /api/transfers/{reference}/checks?cursor=&limit=`: newest first."""
    reference = request.path_params["reference"]
    limit, cursor = _limit_and_cursor(request.query_params, CHECK_CURSOR)

    def load() -> dict[str, Any] | None:
        with read_session(engine_of(request)) as session:
            transfer = None if not takes_text(reference) else find_transfer(session, reference)
            if transfer is None or transfer.id is None:
                return None
            page = list_checks(session, transfer_id=transfer.id, limit=limit, cursor=cursor)
            return {
                "reference": transfer.reference,
                "items": [check_dict(c) for c in page.items],
                "next_cursor": page.next_cursor,
            }

    result = await in_thread(load)
    if result is None:
        raise NotFoundError(f"no transfer with reference {reference!r}")
    return JSONResponse(result)
