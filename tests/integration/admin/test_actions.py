"""Operator actions are written once: the API, the console, the reports page and the CLI write
the same audit row and the same note; a typed error is JSON for the API, a page for a person."""

from __future__ import annotations

import httpx
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from admin.errors import NotFoundError
from admin.identity import Role, csrf_for, page, requires
from ledger.audit import AuditAction
from ledger.db import read_session
from ledger.finding_queue import finding_item
from ledger.types import FindingKind
from payrecon.actor import cli_actor
from tests.integration.admin.conftest import ADMIN, Cast, audit_rows, bearer
from tests.integration.console.seed import finding, transfer
from tests.support.cli import run_cli
from tests.support.relay import add_endpoint
from tests.support.servers import running_server

BROWSER = {"accept": "text/html"}


def _findings(engine: Engine, count: int) -> list[int]:
    return [
        finding(engine, transfer(engine, f"ACT-{n}"), FindingKind.AMOUNT_MISMATCH)
        for n in range(count)
    ]


def test_acknowledge_writes_one_audit_format_and_author_from_every_caller(
    cast: Cast, engine: Engine, database_url: str
) -> None:
    """API, console form, reports page and CLI each acknowledge a finding: the same action,
    subject and detail in the audit log, and the note kept under the operator's name."""
    api_id, console_id, report_id, cli_id = _findings(engine, 4)
    token = cast.tokens["finance"]
    api = httpx.post(
        f"{cast.url}/api/findings/{api_id}/ack", json={"note": "seen"}, headers=bearer(token)
    )
    console = httpx.post(
        f"{cast.url}/console/findings/ack",
        data={"ids": str(console_id), "note": "seen", "csrf_token": csrf_for(token)},
        headers=bearer(token),
    )
    report = httpx.post(
        f"{cast.url}/reports/findings/{report_id}/ack", data={"note": "seen"}, headers=bearer(token)
    )
    cli = run_cli(database_url, "findings", "ack", str(cli_id), "--note", "seen")
    assert (api.status_code, console.status_code, report.status_code) == (200, 303, 303)
    assert cli.exit_code == 0, cli.output
    rows = [
        (row.operator, row.role, row.subject, row.detail)
        for row in audit_rows(engine, AuditAction.FINDING_ACK)
    ]
    assert rows == [
        ("fiona", "finance", f"finding:{api_id}", "seen"),
        ("fiona", "finance", f"finding:{console_id}", "seen"),
        ("fiona", "finance", f"finding:{report_id}", "seen"),
        (cli_actor(), "admin", f"finding:{cli_id}", "seen"),
    ]
    with read_session(engine) as session:
        authors = [
            [note["author"] for note in (finding_item(session, i) or {})["notes"]]
            for i in (api_id, console_id, report_id, cli_id)
        ]
    assert authors == [["fiona"], ["fiona"], ["fiona"], [cli_actor()]]


def test_replay_is_audited_in_one_format_from_the_console_and_the_cli(
    cast: Cast, engine: Engine, database_url: str
) -> None:
    """Replaying an endpoint's events from the console and from the CLI writes one
    `relay.replay` format: subject the endpoint, detail the count and the filters."""
    endpoint_id, _ = add_endpoint(engine, "https://hooks.example.com/in")
    console = httpx.post(
        f"{cast.url}/console/endpoints/{endpoint_id}/replay",
        data={"type": "", "since": "", "csrf_token": csrf_for(ADMIN)},
        headers=bearer(ADMIN),
    )
    cli = run_cli(database_url, "relay", "replay", "--endpoint", str(endpoint_id))
    assert console.status_code == 303 and "done=replayed" in console.headers["location"]
    assert cli.exit_code == 0, cli.output
    rows = [(r.subject, r.detail) for r in audit_rows(engine, AuditAction.RELAY_REPLAY)]
    detail = "0 queued; type=any since=any failed_only=False"
    assert rows == [(f"endpoint:{endpoint_id}", detail)] * 2


async def _missing(request: Request) -> Response:
    raise NotFoundError("no such thing here")


def test_a_typed_error_is_json_for_the_api_and_a_page_for_the_console(engine: Engine) -> None:
    """The same handler raising NotFoundError answers the API's JSON error behind `requires`
    and a small HTML page behind `page`, both 404."""
    app = Starlette(
        routes=[
            Route("/api/thing", requires(Role.VIEWER)(_missing), methods=["GET"]),
            Route("/console/thing", page(Role.VIEWER)(_missing), methods=["GET"]),
        ]
    )
    app.state.engine = engine
    app.state.admin_token = ADMIN
    with running_server(app) as url:
        api = httpx.get(f"{url}/api/thing", headers=bearer(ADMIN))
        console = httpx.get(f"{url}/console/thing", headers={**bearer(ADMIN), **BROWSER})
    assert api.status_code == 404
    assert api.json() == {"status": "error", "error": "not_found", "message": "no such thing here"}
    assert console.status_code == 404
    assert console.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in console.text and "No such thing here." in console.text
    assert "content-security-policy" in console.headers
