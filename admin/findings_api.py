"""The findings workflow over `/api/findings` (list with totals, acknowledge and assign one,
many or everything a filter keeps, notes) and a transfer's provider checks at
`/api/transfers/{reference}/checks`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import findings as actions
from admin.actions import findings_bulk as bulk
from admin.actions.findings import MAX_BULK_ACK
from admin.api import DEFAULT_PAGE
from admin.errors import InvalidError, NotFoundError, QueryError
from admin.shell import actor_of, engine_of, in_thread, json_body
from ledger.checks import CURSOR_KIND as CHECK_CURSOR
from ledger.checks import check_dict, list_checks
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.finding_queue import CURSOR_KIND as QUEUE_CURSOR
from ledger.finding_queue import (
    UNASSIGNED,
    FindingFilter,
    count_queue,
    counted,
    finding_item,
    list_queue,
    queue_counts,
    unresolved_states,
)
from ledger.finding_stakes import TooManyToSortError, decode_amount_cursor, list_queue_by_amount
from ledger.money import whole_number_from_text
from ledger.queries import MAX_PAGE, MAX_ROW_ID, decode_cursor, find_transfer
from ledger.reference_search import MAX_PREFIX, search_key
from ledger.types import FindingKind, FindingState, takes_text, utcnow

__all__ = ["MAX_BULK_ACK"]

# The queue's orders: newest first (by id, the default) or largest amount at stake first.
SORTS = ("newest", "amount")
FILTER_KEYS = ("state", "kind", "assignee", "reference")


def _limit(query: Any) -> int:
    try:
        return whole_number_from_text(
            query.get("limit", str(DEFAULT_PAGE)), minimum=1, maximum=MAX_PAGE
        )
    except NumberInputError as exc:
        raise QueryError("limit", str(exc)) from None


def _limit_and_cursor(query: Any, kind: str) -> tuple[int, str | None]:
    limit = _limit(query)
    cursor = query.get("cursor") or None
    if cursor is not None:
        try:
            decode_cursor(cursor, kind=kind)
        except ValueError:
            raise QueryError("cursor", "is not a cursor this API gave out") from None
    return limit, cursor


def parse_finding_filter(query: Any) -> FindingFilter:
    """`state`, `kind`, `assignee`, `reference` (a prefix, any case) of the queue; QueryError
    naming the first bad one."""
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
    raw_reference = query.get("reference") or None
    reference = None
    if raw_reference is not None:
        if len(raw_reference) > MAX_PREFIX or not takes_text(raw_reference):
            raise QueryError("reference", f"must be at most {MAX_PREFIX} characters of text")
        reference = search_key(raw_reference) or None
    return FindingFilter(state=state, kind=kind, assignee=assignee, reference=reference)


def filter_of_body(raw: object) -> FindingFilter:
    """The `filter` object of a bulk action's body (the keys of `GET /api/findings`'s filter,
    each a string or null); InvalidError on `filter` otherwise."""
    if not isinstance(raw, dict):
        raise InvalidError("filter", "filter must be an object")
    unknown = sorted(str(key)[:40] for key in raw if key not in FILTER_KEYS)
    if unknown:
        raise InvalidError("filter", f"unknown filter keys {unknown}; use {', '.join(FILTER_KEYS)}")
    if not all(value is None or isinstance(value, str) for value in raw.values()):
        raise InvalidError("filter", "each filter value must be a string or null")
    try:
        return parse_finding_filter(raw)
    except QueryError as exc:
        raise InvalidError("filter", f"{exc.extra.get('parameter')}: {exc.message}") from None


def expected_count_of(body: dict[str, Any]) -> int:
    """The count the operator confirmed; InvalidError when it is missing or no count."""
    count = body.get("expected_count")
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= bulk.MAX_BULK:
        raise InvalidError(
            "expected_count",
            f"expected_count (the count you confirmed) must be a whole number 0..{bulk.MAX_BULK}",
        )
    return count


def _sort_of(query: Any) -> str:
    sort = query.get("sort") or "newest"
    if sort not in SORTS:
        raise QueryError("sort", f"must be one of {', '.join(SORTS)}")
    return sort


def finding_id_of(text: str) -> int:
    """A finding id from a path or a body; QueryError (400 invalid_id) when it is not a
    positive row id."""
    try:
        return whole_number_from_text(text, minimum=1, maximum=MAX_ROW_ID)
    except NumberInputError as exc:
        raise QueryError("id", str(exc), code="invalid_id") from None


def load_queue(
    session: Any, where: FindingFilter, *, sort: str, limit: int, cursor: str | None
) -> dict[str, Any]:
    """One page of the queue with its totals: `items`, `next_cursor`, `total` (matching
    findings), `offset` (how many come before this page) and `counts` (per kind and state);
    TooManyToSortError when too many match to sort by amount."""
    counts = queue_counts(session, where)
    if sort == "amount":
        page, total, offset = list_queue_by_amount(session, where, limit=limit, cursor=cursor)
    else:
        page = list_queue(session, where, limit=limit, cursor=cursor)
        if where.state in (FindingState.OPEN, FindingState.ACKNOWLEDGED):
            # The summary counted them already (same snapshot): no second scan.
            total = counted(counts, where, unresolved_states(where))
        else:
            total = count_queue(session, where)
        last = None if cursor is None else decode_cursor(cursor, kind=QUEUE_CURSOR)
        offset = 0 if last is None else count_queue(session, where, down_to=last)
    return {
        "items": page.items,
        "next_cursor": page.next_cursor,
        "total": total,
        "offset": offset,
        "counts": counts,
    }


async def list_findings(request: Request) -> Response:
    """`GET /api/findings?state=&kind=&assignee=&reference=&sort=&cursor=&limit=`."""
    query = request.query_params
    where = parse_finding_filter(query)
    sort = _sort_of(query)
    if sort == "amount":
        limit = _limit(query)
        cursor = query.get("cursor") or None
        if cursor is not None:
            try:
                decode_amount_cursor(cursor)
            except ValueError:
                raise QueryError("cursor", "is not a cursor this API gave out") from None
    else:
        limit, cursor = _limit_and_cursor(query, QUEUE_CURSOR)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            return load_queue(session, where, sort=sort, limit=limit, cursor=cursor)

    try:
        return JSONResponse(await in_thread(load))
    except TooManyToSortError as exc:
        raise QueryError("sort", str(exc)) from None


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


async def _by_filter(request: Request, body: dict[str, Any], *, acknowledging: bool) -> Response:
    where = filter_of_body(body.get("filter"))
    expected = expected_count_of(body)
    actor = actor_of(request)
    engine = engine_of(request)
    if acknowledging:
        text = actions.checked_note(body.get("note"))

        def run() -> bulk.BulkResult:
            return bulk.acknowledge_matching(
                engine, actor, where, expected_count=expected, note=text, now=utcnow()
            )
    else:
        if "assignee" not in body:
            raise InvalidError("assignee", "assignee is required (null unassigns)")
        assignee = body["assignee"]
        if assignee is not None and not isinstance(assignee, str):
            raise InvalidError("assignee", "assignee must be a string or null")

        def run() -> bulk.BulkResult:
            return bulk.assign_matching(
                engine, actor, where, expected_count=expected, assignee=assignee, now=utcnow()
            )

    return JSONResponse((await in_thread(run)).as_dict())


async def ack_many(request: Request) -> Response:
    """`POST /api/findings/ack {"ids": [...], "note"}`: all or nothing; duplicates ignored.
    Or `{"filter": {...}, "expected_count": N, "note"}`: every open finding the filter keeps,
    409 `count_changed` with the current `count` when they are not N (admin.actions.findings_bulk).
    """
    body = await json_body(request)
    if "filter" in body:
        if "ids" in body:
            raise InvalidError("ids", "send ids or a filter, not both")
        return await _by_filter(request, body, acknowledging=True)
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


async def assign_many(request: Request) -> Response:
    """`POST /api/findings/assign {"filter": {...}, "expected_count": N, "assignee"}`: every
    unresolved finding the filter keeps; 409 `count_changed` when they are not N."""
    body = await json_body(request)
    return await _by_filter(request, body, acknowledging=False)


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
