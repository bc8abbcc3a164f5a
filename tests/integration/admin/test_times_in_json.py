"""Every machine format writes times one way: ISO-8601 UTC ending in `Z`, never `+00:00`."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from click.testing import CliRunner
from sqlalchemy import Engine

from admin.expected import parse_expected_collection, register_collection
from ledger.collections import find_collection
from ledger.db import write_session
from ledger.events.outbox import emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import RelayEndpoint
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from payrecon.cli import cli
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN, StartReceiver, bearer

# A time with a numeric offset, as `datetime.isoformat()` writes an aware UTC value.
OFFSET = re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?[+-]\d{2}:\d{2}$")
ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def offsets(value: Any, where: str = "$") -> list[str]:
    """Every string in a JSON value that is a time not written with `Z`, with its path."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in offsets(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in offsets(v, f"{where}[{i}]")]
    if isinstance(value, str) and (
        OFFSET.search(value) or (ISO_TIME.match(value) and not value.endswith("Z"))
    ):
        return [f"{where}={value}"]
    return []


def test_offsets_finds_plus_zero_and_passes_z() -> None:
    """The walker flags `+00:00` and offset-less times and passes `Z` times and dates."""
    assert offsets({"a": ["2026-01-01T10:00:00+00:00"], "b": "2026-01-01T10:00:00"}) == [
        "$.a[0]=2026-01-01T10:00:00+00:00",
        "$.b=2026-01-01T10:00:00",
    ]
    assert offsets({"a": "2026-01-01T10:00:00.5Z", "d": "2026-01-01", "t": "10:00"}) == []


def _seed(engine: Engine) -> tuple[str, int]:
    """A transfer with an acknowledged, assigned and annotated finding, a relay endpoint with an
    event, a finance operator; its token and the finding id."""
    tid = transfer(engine, "TZ-1", provider_reference="PRV-TZ-1")
    fid = finding(engine, tid, FindingKind.AMOUNT_MISMATCH)
    with write_session(engine) as session:
        session.add(RelayEndpoint(url="http://127.0.0.1:9/hook", secret_sealed="x"))
        session.flush()
        emit(
            session,
            type=RelayEventType.FINDING_OPENED,
            subject=Subject.TRANSFER,
            subject_id=tid,
            reference="TZ-1",
            data={"id": fid},
            now=utcnow(),
        )
        register_collection(
            session,
            parse_expected_collection(
                {"reference": "TZ-C1", "amount": 10_000, "expires_at": "2030-01-01T10:00:00Z"}
            ),
            now=utcnow(),
        )
        collection = find_collection(session, "TZ-C1")
        assert collection is not None
        collection.paid_at = utcnow()
        _, token = add_operator(session, name="zed", role="finance", now=utcnow())
    return token, fid


def test_api_and_cli_json_write_times_with_z(
    engine: Engine, database_url: str, start_receiver: StartReceiver
) -> None:
    """The JSON API (transfers, findings, notes, audit, endpoints, events, reports, login) and
    the CLI's --json outputs hold no time with `+00:00`."""
    token, fid = _seed(engine)
    answers: dict[str, Any] = {}
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        finance = bearer(token)
        for name, path in (
            ("note", f"/api/findings/{fid}/notes"),
            ("assign", f"/api/findings/{fid}/assign"),
            ("ack", f"/api/findings/{fid}/ack"),
        ):
            body = {"assignee": "zed"} if name == "assign" else {"note": "checked with bank"}
            answer = httpx.post(f"{url}{path}", json=body, headers=finance)
            assert answer.status_code in (200, 201), answer.text
            answers[name] = answer.json()
        login = httpx.post(f"{url}/login", json={"token": token})
        assert login.status_code == 200, login.text
        answers["login"] = login.json()
        for path in (
            "/api/transfers",
            "/api/transfers/TZ-1",
            "/api/transfers/TZ-1/checks",
            "/api/findings",
            "/api/findings?state=acknowledged",
            "/api/audit",
            "/api/endpoints",
            "/api/events",
            "/api/collections",
            "/api/collections/TZ-C1",
            "/api/reports/summary",
        ):
            answer = httpx.get(f"{url}{path}", headers=bearer(ADMIN))
            assert answer.status_code == 200, (path, answer.text)
            answers[path] = answer.json()
    runner = CliRunner()
    env = {"PAYRECON_DATABASE_URL": database_url}
    for args in (
        ["operators", "list", "--json"],
        ["findings", "list", "--json"],
        ["report", "--format", "json"],
        ["collection", "show", "TZ-C1", "--json"],
        ["endpoints", "list", "--json"],
    ):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code == 0, (args, result.output)
        answers[" ".join(args)] = json.loads(result.output)
    assert answers["login"]["expires_at"].endswith("Z")
    assert answers["/api/collections/TZ-C1"]["expires_at"] == "2030-01-01T10:00:00Z"
    assert any(ISO_TIME.match(str(a.get("at", ""))) for a in answers["/api/audit"]["items"])
    assert [p for name, value in answers.items() for p in offsets(value, name)] == []
