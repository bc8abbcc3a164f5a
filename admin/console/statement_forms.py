"""The forms of the statements and periods pages: confirm a suggestion, match, ignore or
unmatch a line, import a statement file, close (and lock) a period. Each goes through the
operator actions (admin.actions.statements: validated, audited) in one transaction and is
answered with a redirect back to the page it came from with a fixed banner code
(admin.console.render); an import with invalid lines is answered with a page listing every
one of them with its line number."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlmodel import Session
from starlette.requests import Request
from starlette.responses import Response

from admin.actions import statements as actions
from admin.actions.actor import Actor
from admin.console.findings_page import form_fields
from admin.console.render import back_to, render
from admin.console.statement_filters import period_filters
from admin.errors import (
    AdminError,
    ConflictError,
    InvalidError,
    InvalidLinesError,
    NotFoundError,
    TooLargeError,
)
from admin.shell import actor_of, engine_of, in_thread, settings_of
from ledger.db import write_session
from ledger.queries import MAX_ROW_ID
from ledger.types import utcnow
from statements.mapping import builtin_mappings
from web.errors import BodyTooLargeError, WebError
from web.upload import read_upload

STATEMENTS = "/console/statements"
PERIODS = "/console/periods"
# Each refusal of a line action, by what its message says (the banner texts are fixed).
_REFUSALS = (
    ("has the reference", "unknown_reference"),
    ("already matched", "line_not_open"),
    ("is ignored", "line_not_open"),
    ("further apart", "amount_too_far"),
    ("not suggested", "not_suggested"),
)


def _back(fields: dict[str, list[str]], default: str) -> str:
    # Only back to a console page of ours: never an open redirect to another site.
    back = (fields.get("back") or [default])[-1]
    if not back.startswith("/console") or "//" in back or "\\" in back:
        return default
    return back


def _one(fields: dict[str, list[str]], name: str) -> str:
    return (fields.get(name) or [""])[-1].strip()


def _line_id(request: Request) -> int | None:
    raw = request.path_params["id"]
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None
    value = int(raw)
    return value if 1 <= value <= MAX_ROW_ID else None


def _refusal(exc: AdminError) -> str:
    if isinstance(exc, NotFoundError):
        return "line_missing"
    if isinstance(exc, InvalidError):
        if exc.field == "note":
            return "note_refused"
        if exc.field == "as":
            return "bad_ignore_type"
        return "bad_reference"
    text = str(exc)
    return next((code for words, code in _REFUSALS if words in text), "match_refused")


async def _line_action(
    request: Request,
    fields: dict[str, list[str]],
    done: str,
    change: Callable[[Session, Actor, int], object],
) -> Response:
    """Run a line action in one transaction; back to the page with what was done or why
    not (a database that does not answer is the console's 503 page)."""
    back = _back(fields, STATEMENTS)
    line_id = _line_id(request)
    if line_id is None:
        return back_to(back, error="bad_line_id")
    actor = actor_of(request)

    def store() -> None:
        with write_session(engine_of(request)) as session:
            change(session, actor, line_id)

    try:
        await in_thread(store)
    except (InvalidError, NotFoundError, ConflictError) as exc:
        return back_to(back, error=_refusal(exc))
    return back_to(back, done=done)


async def confirm(request: Request) -> Response:
    """POST `/console/statements/lines/{id}/confirm`: match the line to its suggestion."""
    return await _line_action(
        request,
        await form_fields(request),
        "confirmed",
        lambda session, actor, line_id: actions.confirm(session, actor, line_id, now=utcnow()),
    )


async def match(request: Request) -> Response:
    """POST `/console/statements/lines/{id}/match` (`target` transfer|collection|line and
    `reference`: a transfer's or collection's reference, either one, or the other line's
    id)."""
    fields = await form_fields(request)
    target, reference = _one(fields, "target"), _one(fields, "reference")

    def change(session: Session, actor: Actor, line_id: int) -> object:
        if target == "line":
            other = int(reference) if reference.isascii() and reference.isdigit() else 0
            if not 1 <= other <= MAX_ROW_ID:
                raise InvalidError("line", "a line id is a positive integer")
            return actions.match(session, actor, line_id, line=other, now=utcnow())
        if target not in ("transfer", "collection"):
            raise InvalidError("target", "match to a transfer, a collection or a line")
        if target == "transfer":
            return actions.match(session, actor, line_id, transfer=reference, now=utcnow())
        return actions.match(session, actor, line_id, collection=reference, now=utcnow())

    return await _line_action(request, fields, "matched", change)


async def ignore(request: Request) -> Response:
    """POST `/console/statements/lines/{id}/ignore` (`as` funding|charge|settlement|other,
    `note` required)."""
    fields = await form_fields(request)
    kind, note = _one(fields, "as"), (fields.get("note") or [""])[-1]
    return await _line_action(
        request,
        fields,
        "ignored",
        lambda session, actor, line_id: actions.ignore(
            session, actor, line_id, ignored_as=kind, note=note, now=utcnow()
        ),
    )


async def unmatch(request: Request) -> Response:
    """POST `/console/statements/lines/{id}/unmatch`: undo a match, suggestion or ignore."""
    return await _line_action(
        request,
        await form_fields(request),
        "unmatched",
        lambda session, actor, line_id: actions.unmatch(session, actor, line_id, now=utcnow()),
    )


def _import_refusal(exc: Exception) -> str:
    if isinstance(exc, TooLargeError | BodyTooLargeError):
        return "file_too_large"
    if isinstance(exc, ConflictError):
        return "account_kind"
    if isinstance(exc, InvalidError) and exc.field in ("account", "kind", "format"):
        return "bad_import_options"
    return "bad_statement_file"


async def import_file(request: Request) -> Response:
    """POST `/console/statements/import` (multipart: `csrf_token` first, then `account`,
    `kind`, `format`, `mapping`, `skip_invalid`, and the `file`): the statement imported
    through the import action, streamed to a temporary file within
    PAYRECON_STATEMENT_MAX_BYTES (413's banner past it); every invalid line listed on a 422
    page when nothing was stored."""
    settings = settings_of(request)
    limit = int(getattr(settings, "statement_max_bytes", 200_000_000))
    with tempfile.TemporaryDirectory(prefix="payrecon-upload-") as where:
        try:
            upload = await read_upload(request, Path(where) / "statement", limit=limit)
        except BodyTooLargeError:
            return back_to(STATEMENTS, error="file_too_large")
        except WebError as exc:
            if exc.status_code == 408:
                raise
            return back_to(STATEMENTS, error="bad_statement_file")
        if upload.path is None or upload.size == 0:
            return back_to(STATEMENTS, error="no_file")
        account = upload.one("account").strip() or "provider-wallet"
        options: dict[str, Any] = {
            "account": account,
            "kind": upload.one("kind") or None,
            "format": upload.one("format") or "auto",
            "mapping": upload.one("mapping").strip() or None,
            "skip_invalid": bool(upload.one("skip_invalid")),
            "file_name": (upload.file_name or "statement")[-200:],
        }
        if options["mapping"] is not None and options["mapping"] not in builtin_mappings():
            # Only the built-in mappings by name: a path would read the server's files.
            return back_to(STATEMENTS, error="bad_import_options")
        actor = actor_of(request)
        # The import row keeps the file's own name (its last path part, tamed): the upload
        # was streamed to a neutral name before it was known.
        path = upload.path.with_name(_file_name(options["file_name"]))
        upload.path.rename(path)

        def store() -> Any:
            with write_session(engine_of(request)) as session:
                return actions.import_statement(
                    session,
                    actor,
                    path,
                    window=settings.statement_date_window,
                    max_bytes=limit,
                    now=utcnow(),
                    **options,
                )

        try:
            await in_thread(store)
        except InvalidLinesError as exc:
            return render(
                request,
                "statement_invalid.html",
                status=422,
                title="Statement not imported",
                file_name=options["file_name"],
                invalid=exc.invalid,
                total=exc.total,
            )
        except (InvalidError, ConflictError, TooLargeError) as exc:
            return back_to(STATEMENTS, error=_import_refusal(exc))
    return back_to(f"{STATEMENTS}?account={quote(account, safe='')}", done="imported")


def _file_name(given: str) -> str:
    """A browser's file name fit to be one here: its last part, printable, at most 100."""
    last = given.replace("\\", "/").rsplit("/", 1)[-1]
    kept = "".join(c for c in last if c.isprintable() and c not in "\x00")[-100:]
    return kept.strip(". ") or "statement"


async def close_period(request: Request) -> Response:
    """POST `/console/periods/close` (`account`, `since`, `until`, `lock`): the period's
    tie-out, and with `lock` the period recorded as closed (audited)."""
    fields = await form_fields(request)
    back = _back(fields, PERIODS)
    account, since, until = (_one(fields, name) for name in ("account", "since", "until"))
    lock = bool(_one(fields, "lock"))
    # The console's own bounds first: the tie-out reads a week either side of the period.
    if period_filters({"account": account, "since": since, "until": until}).problems or not (
        account and since and until
    ):
        return back_to(back, error="bad_period")
    actor = actor_of(request)

    def store() -> None:
        with write_session(engine_of(request)) as session:
            actions.close_period(session, actor, account, since, until, lock=lock, now=utcnow())

    try:
        await in_thread(store)
    except InvalidError:
        return back_to(back, error="bad_period")
    except NotFoundError:
        return back_to(back, error="unknown_account")
    return back_to(back, done="period_locked" if lock else "period_closed")
