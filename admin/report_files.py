"""Report files over HTTP: `GET /console/reports/download?format=&since=&until=` answers the
report for a period as a file to save (CSV, XLSX, HTML or JSON), the same bytes as
`payrecon report --format F --output FILE`.

A plain handler; `admin.routes` mounts it behind the finance role (PRODUCT.md: finance
"exports reports"). The file is written to a temporary file first (a workbook needs a seekable
file; a long CSV never sits in memory) and streamed from there, then removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from admin.errors import AdminError, QueryError
from admin.shell import engine_of, in_thread, settings_of
from ledger.db import read_session
from ledger.types import utcnow
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import Period, parse_period
from reconcile.reports.render import write_report

DOWNLOAD_PATH = "/console/reports/download"


@dataclass(frozen=True)
class FileFormat:
    """One downloadable format: its `format=` name, file extension and content type."""

    name: str
    extension: str
    media_type: str


# The order the console lists them in.
FILE_FORMATS: tuple[FileFormat, ...] = (
    FileFormat("csv", "csv", "text/csv; charset=utf-8"),
    FileFormat("xlsx", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    FileFormat("html", "html", "text/html; charset=utf-8"),
    FileFormat("json", "json", "application/json"),
)
BY_NAME = {f.name: f for f in FILE_FORMATS}
# A saved HTML report is self-contained (inline CSS, no script); opened from the server by
# mistake it still runs nothing and loads nothing.
FILE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"


def period_of(values: Any) -> Period:
    """The `since`/`until` Lagos days of a query string; a 400 `invalid_period` otherwise."""
    try:
        return parse_period(
            values.get("since") or None, values.get("until") or None, names=("since", "until")
        )
    except PeriodError as exc:
        raise AdminError(str(exc), code="invalid_period") from None


def format_of(values: Any) -> FileFormat:
    """The `format` asked for; a 400 `invalid_query` naming the known ones otherwise."""
    name = (values.get("format") or "").strip().lower()
    if name not in BY_NAME:
        known = ", ".join(BY_NAME)
        raise QueryError("format", f"must be one of {known}")
    return BY_NAME[name]


def file_name(period: Period, chosen: FileFormat) -> str:
    """`payrecon-report-<since>-to-<until>.<ext>` ("start"/"now" for an open side): ASCII
    only, so the header needs no encoding."""
    since = period.since.isoformat() if period.since else "start"
    until = period.until.isoformat() if period.until else "now"
    return f"payrecon-report-{since}-to-{until}.{chosen.extension}"


def download_link(chosen: FileFormat, period: Period) -> str:
    """The console's link to one file of the period."""
    query = [("format", chosen.name)] + [(k, v) for k, v in period.as_dict().items() if v]
    return f"{DOWNLOAD_PATH}?{urlencode(query)}"


async def download(request: Request) -> Response:
    """`GET /console/reports/download?format=csv|xlsx|html|json&since=&until=`: the report
    file for the period as an attachment."""
    chosen = format_of(request.query_params)
    period = period_of(request.query_params)
    stale_after = int(getattr(settings_of(request), "stale_after", DEFAULT_STALE_AFTER))
    now = utcnow()

    def write() -> Path:
        handle, name = tempfile.mkstemp(prefix="payrecon-report-", suffix="." + chosen.extension)
        os.close(handle)
        path = Path(name)
        try:
            with read_session(engine_of(request)) as session:
                write_report(
                    session,
                    period=period,
                    fmt=chosen.name,
                    path=path,
                    stale_after=stale_after,
                    now=now,
                )
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path

    path = await in_thread(write)
    return FileResponse(
        path,
        media_type=chosen.media_type,
        filename=file_name(period, chosen),
        headers={
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": FILE_POLICY,
        },
        background=BackgroundTask(_remove, path),
    )


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
