"""Rendering console pages: the shared Jinja2 environment (web.templates), one layout, a
strict CSP."""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from admin.actions.findings import MAX_BULK_ACK
from admin.actions.findings_bulk import MAX_BULK
from admin.identity import CSRF_FIELD, Role, csrf_token, current_operator
from ledger.figures import counted_fee
from ledger.findings import MAX_NOTE_CHARS
from reconcile.reports.model import iso
from reconcile.reports.naira import naira, naira_text
from reconcile.reports.period import lagos_text
from web.templates import with_filters

# No script at all; the one stylesheet is inline and carries this response's nonce; forms
# post only back to us; nothing may frame the console.
POLICY = (
    "default-src 'none'; style-src 'nonce-{nonce}'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
MESSAGES = ("done", "error")
# Banners come from these fixed texts, chosen by a code in the query string (`?done=` or
# `?error=`); an unknown code shows nothing. Free text from the URL is never shown: a link
# could otherwise make the console say anything (docs/rules.md Robustness rules).
DONE_BANNERS = {
    "acknowledged": "Findings acknowledged.",
    "assigned": "Assignment saved.",
    "noted": "Note added.",
    "bulk_acknowledged": "Every matching open finding was acknowledged.",
    "bulk_assigned": "Every matching unresolved finding was assigned.",
    "retried": "The delivery is due now.",
    "replayed": "The endpoint's deliveries are queued again.",
    "confirmed": "Suggestion confirmed: the line is matched.",
    "matched": "Line matched.",
    "ignored": "Line ignored with its reason.",
    "unmatched": "The line is unmatched again.",
    "imported": "Statement imported: its counts are in the imports table.",
    "period_closed": "Period closed (not locked): the tie-out is below.",
    "period_locked": "Period closed and locked: a later change to it raises closed_period_changed.",
}
ERROR_BANNERS = {
    "missing_findings": "A finding in the form does not exist: nothing was changed.",
    "unknown_operator": "No operator has that name: nothing was changed.",
    "note_refused": (
        f"Note refused: a note is required, at most {MAX_NOTE_CHARS} characters, "
        "without control characters."
    ),
    "bad_finding_ids": "A finding id in the form is not valid.",
    "bad_finding_id": "That finding id is not valid.",
    "none_ticked": "Tick at least one finding to acknowledge.",
    "too_many": f"At most {MAX_BULK_ACK} findings at once.",
    "count_changed": (
        "The number of matching findings changed since the page was shown: nothing was "
        "changed. Check the new count below and confirm again."
    ),
    "too_wide": f"More than {MAX_BULK:,} findings match: narrow the filter first.",
    "bad_bulk_form": "That bulk form is not valid: reload the page and try again.",
    "bad_delivery_id": "That delivery id is not valid.",
    "bad_endpoint_id": "That endpoint id is not valid.",
    "bad_replay": "Replay needs a known event type and a day like 2026-03-01.",
    "not_found": "No such endpoint or delivery.",
    "not_retryable": (
        "That delivery cannot be retried: it was delivered already, or its endpoint was removed."
    ),
    "bad_line_id": "That statement line id is not valid.",
    "line_missing": "No statement line has that id: nothing was changed.",
    "line_not_open": (
        "That line is already matched or ignored: unmatch it first. Nothing was changed."
    ),
    "not_suggested": "That line has no suggestion to confirm any more: nothing was changed.",
    "unknown_reference": "No transfer or collection has that reference: nothing was changed.",
    "bad_reference": (
        "Match needs a transfer or collection reference (up to 200 characters) or another "
        "line's id: nothing was changed."
    ),
    "amount_too_far": (
        "The line's amount is further from that transfer's or collection's than its fee: "
        "nothing was changed."
    ),
    "match_refused": (
        "That match makes no sense (the direction does not fit, or that movement is already on "
        "the statement): nothing was changed."
    ),
    "bad_ignore_type": "Ignore the line as funding, charge, settlement or other.",
    "no_file": "Choose a statement file to import.",
    "file_too_large": "That file is larger than PAYRECON_STATEMENT_MAX_BYTES: nothing was stored.",
    "bad_statement_file": (
        "That file cannot be read as a statement in the format and mapping chosen: nothing was "
        "stored."
    ),
    "bad_import_options": "Choose a known account name, kind, format and built-in mapping.",
    "account_kind": "That account exists with the other kind (wallet or bank): nothing was stored.",
    "bad_period": (
        "A period is an account and two days from 1900-01-01 to 9000-12-31, since on or before "
        "until."
    ),
    "unknown_account": "No statement account has that name.",
}
# Each page with the role it needs: an operator sees only the pages it may open.
NAVIGATION = (
    ("/console", "Overview", Role.VIEWER),
    ("/console/transfers", "Transfers", Role.VIEWER),
    ("/console/collections", "Collections", Role.VIEWER),
    ("/console/findings", "Findings", Role.VIEWER),
    ("/console/reports", "Reports", Role.VIEWER),
    ("/console/endpoints", "Endpoints", Role.VIEWER),
    ("/console/statements", "Statements", Role.VIEWER),
    ("/console/periods", "Periods", Role.VIEWER),
    ("/console/audit", "Audit log", Role.ADMIN),
)


def lagos_time(value: dt.datetime | None) -> str:
    """An instant as Lagos wall-clock time to the second, marked WAT ("—" for none)."""
    return lagos_text(value)


def environment() -> jinja2.Environment:
    """The shared environment (web.templates) with the console's filters; its templates are
    admin/console/templates, under `console/`."""
    return with_filters(
        naira=naira, naira_text=naira_text, lagos=lagos_time, iso=iso, counted_fee=counted_fee
    )


def render(request: Request, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    """The page `template` in the layout, for this request's operator, with its CSRF token."""
    nonce = secrets.token_urlsafe(16)
    operator = current_operator(request)
    html = (
        environment()
        .get_template(f"console/{template}")
        .render(
            nonce=nonce,
            operator=operator,
            csrf_field=CSRF_FIELD,
            csrf_token=csrf_token(request),
            navigation=[(h, t) for h, t, role in NAVIGATION if operator.role.allows(role)],
            path=request.url.path,
            flash=DONE_BANNERS.get(request.query_params.get("done", ""), ""),
            error=ERROR_BANNERS.get(request.query_params.get("error", ""), ""),
            finance=Role.FINANCE,
            admin=Role.ADMIN,
            **context,
        )
    )
    headers = {
        "Content-Security-Policy": POLICY.format(nonce=nonce),
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }
    return HTMLResponse(html, status, headers=headers)


def back_to(target: str, **message: str | None) -> RedirectResponse:
    """303 back to a page after a POST (POST/redirect/GET), with a `done` or `error` banner
    code (DONE_BANNERS, ERROR_BANNERS) in place of any earlier one."""
    assert all(
        code is None or code in (DONE_BANNERS if kind == "done" else ERROR_BANNERS)
        for kind, code in message.items()
    ), message
    path, _, query = target.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in MESSAGES]
    kept += [(k, v) for k, v in message.items() if v]
    return RedirectResponse(path + (f"?{urlencode(kept)}" if kept else ""), status_code=303)


def page_link(path: str, query: dict[str, str | None], **changes: str | None) -> str:
    """`path` with the page's filters, some changed (e.g. the next cursor)."""
    merged = {k: v for k, v in {**query, **changes}.items() if v}
    return path + (f"?{urlencode(merged)}" if merged else "")
