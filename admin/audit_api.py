"""`GET /api/audit`: the audit log, newest first, filtered and paged by cursor."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.api import (
    query_cursor,
    query_limit,
    query_since,
)
from admin.errors import QueryError
from admin.shell import engine_of, in_thread
from ledger.audit import AuditAction, AuditQuery, decode_audit_cursor, entry_record, list_entries
from ledger.db import read_session
from ledger.types import takes_text

MAX_OPERATOR_CHARS = 64


def parse_audit_query(query: Any) -> AuditQuery:
    """`operator`, `action`, `since`, `limit`, `cursor`; QueryError naming the first bad one."""
    operator = query.get("operator") or None
    if operator is not None and (len(operator) > MAX_OPERATOR_CHARS or not takes_text(operator)):
        raise QueryError("operator", f"must be an operator name of at most {MAX_OPERATOR_CHARS}")
    action = query.get("action") or None
    if action is not None and action not in set(AuditAction):
        raise QueryError("action", f"must be one of {', '.join(AuditAction)}")
    return AuditQuery(
        operator=operator,
        action=action,
        since=query_since(query),
        limit=query_limit(query),
        cursor=query_cursor(query, decode_audit_cursor),
    )


async def list_audit(request: Request) -> Response:
    """`GET /api/audit?operator=&action=&since=&limit=&cursor=`: `{"items", "next_cursor"}`."""
    query = parse_audit_query(request.query_params)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            page = list_entries(session, query)
            return {
                "items": [entry_record(entry) for entry in page.items],
                "next_cursor": page.next_cursor,
            }

    return JSONResponse(await in_thread(load))
