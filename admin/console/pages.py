"""Console pages: the overview, the transfers and collections lists and search, one
transfer's or collection's timeline."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlmodel import Session
from starlette.requests import Request
from starlette.responses import Response

from admin.console.render import page_link, render
from admin.shell import engine_of, in_thread
from ledger.collections import CURSOR_KIND as COLLECTION_CURSOR
from ledger.collections import find_collection, list_collections
from ledger.db import read_session
from ledger.finding_queue import FindingFilter, list_queue
from ledger.models import Collection, Transfer
from ledger.overview import overview
from ledger.queries import ANY_FINDING, decode_cursor, find_transfer, list_transfers
from ledger.reference_search import search_key
from ledger.subjects import subject_of
from ledger.timeline import Entry
from ledger.timeline_sources import collection_timeline, transfer_timeline
from ledger.types import PROVIDER_STATUSES, FindingKind, TransferStatus, takes_text, utcnow
from reconcile.advice import Figures, finance_advice
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import lagos_day, lagos_midnight_utc, parse_day

PAGE_SIZE = 50
MAX_SEARCH_CHARS = 200


async def overview_page(request: Request) -> Response:
    """`/console`: open findings by kind, stale pending, relay health, today's figures."""
    now = utcnow()
    day_start = lagos_midnight_utc(lagos_day(now))
    stale_after = int(request.app.state.settings.stale_after)

    def load() -> Any:
        with read_session(engine_of(request)) as session:
            return overview(session, day_start=day_start, now=now, stale_after=stale_after)

    figures = await in_thread(load)
    return render(
        request,
        "overview.html",
        title="Overview",
        figures=figures,
        statuses=list(TransferStatus),
        day=lagos_day(now).isoformat(),
    )


def _transfer_filters(
    query: Any, *, cursor_kind: str = "t"
) -> tuple[dict[str, str | None], list[str]]:
    """The list's filters as given (for links) and the problems with them."""
    given = {
        name: (query.get(name) or "").strip() or None
        for name in ("q", "status", "finding", "day", "cursor")
    }
    problems = []
    if given["q"] and (
        len(given["q"] or "") > MAX_SEARCH_CHARS or not takes_text(given["q"] or "")
    ):
        problems.append(f"A reference has at most {MAX_SEARCH_CHARS} characters.")
        given["q"] = None
    if given["status"] not in (None, *TransferStatus):
        problems.append("Unknown status.")
        given["status"] = None
    if given["finding"] not in (None, ANY_FINDING, *FindingKind):
        problems.append("Unknown finding kind.")
        given["finding"] = None
    if given["day"]:
        try:
            parse_day(given["day"] or "", option="day")
        except PeriodError:
            problems.append("The day is a date like 2026-03-01.")
            given["day"] = None
    if given["cursor"]:
        try:
            decode_cursor(given["cursor"] or "", kind=cursor_kind)
        except ValueError:
            problems.append("That page link is not valid any more; showing the first page.")
            given["cursor"] = None
    return given, problems


async def transfers_page(request: Request) -> Response:
    """`/console/transfers`: search by a prefix of either reference (any case); filter by
    status, finding, day."""
    given, problems = _transfer_filters(request.query_params)

    def load() -> tuple[list[Any], str | None]:
        with read_session(engine_of(request)) as session:
            since = until = None
            if given["day"]:
                day = parse_day(given["day"] or "", option="day")
                since = lagos_midnight_utc(day)
                until = lagos_midnight_utc(day + dt.timedelta(days=1))
            page = list_transfers(
                session,
                status=TransferStatus(given["status"]) if given["status"] else None,
                finding=given["finding"],
                since=since,
                until=until,
                limit=PAGE_SIZE,
                cursor=given["cursor"],
                reference=search_key(given["q"] or "") or None,
            )
            return page.items, page.next_cursor

    items, next_cursor = await in_thread(load)
    return render(
        request,
        "transfers.html",
        title="Transfers",
        noun="transfer",
        base_path="/console/transfers",
        by_day=True,
        given=given,
        problems=problems,
        items=items,
        statuses=list(TransferStatus),
        kinds=list(FindingKind),
        any_finding=ANY_FINDING,
        next_link=None
        if next_cursor is None
        else page_link("/console/transfers", given, cursor=next_cursor),
        first_link=page_link("/console/transfers", given, cursor=None) if given["cursor"] else None,
    )


async def transfer_page(request: Request) -> Response:
    """`/console/transfers/{reference}`: the transfer, its findings and its timeline."""
    return await _story_page(request, noun="transfer", find=find_transfer, story=transfer_timeline)


async def _story_page(
    request: Request,
    *,
    noun: str,
    find: Callable[[Session, str], Transfer | Collection | None],
    story: Callable[[Session, Any], list[Entry]],
) -> Response:
    """One transfer's or collection's page (`noun`.html): the row, its findings with their
    forms, its timeline; a 404 page naming the reference when there is none."""
    reference = request.path_params["reference"]

    def load() -> dict[str, Any] | None:
        if not takes_text(reference):
            return None
        with read_session(engine_of(request)) as session:
            row = find(session, reference)
            if row is None or row.id is None:
                return None
            where = FindingFilter(subject=subject_of(row))
            findings = list_queue(session, where, limit=100).items
            return {
                noun: row,
                "findings": findings,
                "advice": {f["id"]: _advice(row, f["kind"], f["detail"]) for f in findings},
                "timeline": story(session, row),
                "noun": noun,
                "base_path": f"/console/{noun}s",
                "subject_reference": row.reference,
                "title": f"{noun.capitalize()} {row.reference}",
            }

    loaded = await in_thread(load)
    if loaded is None:
        return render(
            request,
            "missing.html",
            status=404,
            title=f"No such {noun}",
            reference=reference if takes_text(reference) else "",
        )
    return render(request, f"{noun}.html", **loaded)


def _advice(row: Transfer | Collection, kind: str, detail: str) -> str:
    """What finance should do about a finding on `row`: a transfer's advice depends on which
    of its figures differ (reconcile.advice)."""
    figures = Figures.of(row, detail) if isinstance(row, Transfer) else None
    return finance_advice(kind, figures)


async def collections_page(request: Request) -> Response:
    """`/console/collections`: search by a prefix of either reference (any case); filter by
    status and finding."""
    given, problems = _transfer_filters(request.query_params, cursor_kind=COLLECTION_CURSOR)
    given["day"] = None  # a collection list has no day filter

    def load() -> tuple[list[Any], str | None]:
        with read_session(engine_of(request)) as session:
            page = list_collections(
                session,
                status=TransferStatus(given["status"]) if given["status"] else None,
                finding=given["finding"],
                limit=PAGE_SIZE,
                cursor=given["cursor"],
                reference=search_key(given["q"] or "") or None,
            )
            return page.items, page.next_cursor

    items, next_cursor = await in_thread(load)
    path = "/console/collections"
    return render(
        request,
        "transfers.html",
        title="Collections",
        noun="collection",
        base_path=path,
        by_day=False,
        given=given,
        problems=problems,
        items=items,
        statuses=list(PROVIDER_STATUSES),
        kinds=list(FindingKind),
        any_finding=ANY_FINDING,
        next_link=None if next_cursor is None else page_link(path, given, cursor=next_cursor),
        first_link=page_link(path, given, cursor=None) if given["cursor"] else None,
    )


async def collection_page(request: Request) -> Response:
    """`/console/collections/{reference}`: the collection, its findings and its timeline."""
    return await _story_page(
        request, noun="collection", find=find_collection, story=collection_timeline
    )
