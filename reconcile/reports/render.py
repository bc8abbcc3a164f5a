"""Write a report in any of the five formats to a stream or a file (the CLI's one call)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from rich.console import Console
from sqlmodel import Session

from ledger.types import utcnow
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.csvout import write_csv
from reconcile.reports.errors import OutputError
from reconcile.reports.html import render_html
from reconcile.reports.jsonout import write_json
from reconcile.reports.period import Period
from reconcile.reports.rows import iter_collection_rows, iter_report_rows, iter_transfer_rows
from reconcile.reports.summary import compute_report
from reconcile.reports.text import render_text
from reconcile.reports.xlsx import write_xlsx

FORMATS: tuple[str, ...] = ("text", "csv", "json", "html", "xlsx")
FILE_TEXT_WIDTH = 120


@contextlib.contextmanager
def _target(out: TextIO | None, path: Path | None) -> Iterator[TextIO]:
    if path is None:
        if out is None:
            raise OutputError("no output given")
        yield out
        return
    # newline="" so the csv module's CRLF row ends are written as they are (RFC 4180).
    with path.open("w", encoding="utf-8", newline="") as handle:
        yield handle


def write_report(
    session: Session,
    *,
    period: Period,
    fmt: str,
    out: TextIO | None = None,
    path: Path | None = None,
    stale_after: int = DEFAULT_STALE_AFTER,
    now: dt.datetime | None = None,
) -> None:
    """Render the report for `period` as `fmt` into `path` (when given) or the stream `out`."""
    now = now or utcnow()
    if fmt not in FORMATS:
        raise OutputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "xlsx":
        if path is None:
            raise OutputError("--format xlsx needs --output FILE (a workbook is not text)")
        report = compute_report(session, period, stale_after=stale_after, now=now)
        write_xlsx(
            report,
            iter_transfer_rows(session, period),
            path,
            iter_collection_rows(session, period),
        )
        return
    with _target(out, path) as stream:
        if fmt == "csv":
            write_csv(iter_report_rows(session, period), stream)
            return
        report = compute_report(session, period, stale_after=stale_after, now=now)
        if fmt == "json":
            write_json(report.as_dict(), stream)
        elif fmt == "html":
            stream.write(render_html(report, now=now))
        else:
            width = None if stream.isatty() else FILE_TEXT_WIDTH
            render_text(report, Console(file=stream, width=width), now=now)
