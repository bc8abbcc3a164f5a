"""The audit log: every operator action is one row, `GET /api/audit` reads it, nothing edits it."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from ledger.audit import AuditAction, record
from ledger.db import write_session
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.types import FindingKind, utcnow
from payrecon.actor import cli_actor
from tests.integration.admin.conftest import ADMIN, Cast, audit_rows, bearer
from tests.integration.relay.conftest import add_transfer, emit, record_attempt
from tests.support import relay as relay_support
from tests.support.apps import payout_stack
from tests.support.cli import run_cli


def _trail(engine: Engine) -> list[tuple[str, str, str, str | None]]:
    return [(r.operator, r.role, r.action, r.subject) for r in audit_rows(engine)]


def test_endpoint_changes_and_a_retry_are_audited_with_who_and_where(
    cast: Cast, engine: Engine
) -> None:
    """Adding, changing, rotating, removing an endpoint and retrying a delivery: one row each,
    with the operator, its role and its address."""
    boss = bearer(cast.tokens["admin"])
    added = httpx.post(
        f"{cast.url}/api/endpoints", json={"url": "http://127.0.0.1:9/"}, headers=boss
    )
    endpoint = added.json()["id"]
    seeded = emit(engine, add_transfer(engine, "AUD-1"), "AUD-1")
    record_attempt(engine, seeded.delivery_ids[0], outcome="failed")
    answers = [
        httpx.patch(f"{cast.url}/api/endpoints/{endpoint}", json={"enabled": False}, headers=boss),
        httpx.post(f"{cast.url}/api/endpoints/{endpoint}/rotate-secret", headers=boss),
        httpx.post(f"{cast.url}/api/deliveries/{seeded.delivery_ids[0]}/retry", headers=boss),
        httpx.delete(f"{cast.url}/api/endpoints/{endpoint}", headers=boss),
    ]
    assert added.status_code == 201 and [a.status_code for a in answers] == [200] * 4
    subject = f"endpoint:{endpoint}"
    assert _trail(engine) == [
        ("boss", "admin", "endpoint.add", subject),
        ("boss", "admin", "endpoint.update", subject),
        ("boss", "admin", "endpoint.rotate", subject),
        ("boss", "admin", "delivery.retry", f"delivery:{seeded.delivery_ids[0]}"),
        ("boss", "admin", "endpoint.remove", subject),
    ]
    assert {row.remote_addr for row in audit_rows(engine)} == {"127.0.0.1"}
    assert json.loads(audit_rows(engine)[1].detail or "") == {
        "enabled": {"old": True, "new": False}
    }


def test_a_refused_action_leaves_no_audit_row(cast: Cast, engine: Engine) -> None:
    """A 403 or a 404 changed nothing, so there is nothing to audit."""
    viewer = httpx.post(
        f"{cast.url}/api/endpoints",
        json={"url": "http://127.0.0.1:9/"},
        headers=bearer(cast.tokens["viewer"]),
    )
    missing = httpx.delete(f"{cast.url}/api/endpoints/77", headers=bearer(cast.tokens["admin"]))
    assert (viewer.status_code, missing.status_code) == (403, 404)
    assert audit_rows(engine) == []


def test_acknowledging_on_the_reports_page_and_the_cli_is_audited(
    cast: Cast, engine: Engine, database_url: str
) -> None:
    """The report page's form (finance) and `findings ack` (the CLI) each write finding.ack
    with the note as detail."""
    transfer_id = add_transfer(engine, "AUD-ACK")
    with write_session(engine) as session:
        ids = []
        for kind in (FindingKind.STALE_PENDING, FindingKind.FEE_MISMATCH):
            finding = raise_finding(
                session,
                subject=Subject.TRANSFER,
                subject_id=transfer_id,
                kind=kind,
                detail="d",
                now=utcnow(),
            )
            assert finding is not None
            ids.append(finding.id)
    form = httpx.post(
        f"{cast.url}/reports/findings/{ids[0]}/ack",
        data={"note": "<b>paid</b> by hand"},
        headers=bearer(cast.tokens["finance"]),
    )
    result = run_cli(database_url, "findings", "ack", str(ids[1]), "--note", "provider refunded")
    assert form.status_code == 303 and result.exit_code == 0, result.output
    rows = audit_rows(engine, AuditAction.FINDING_ACK)
    assert [(r.operator, r.role, r.subject, r.detail) for r in rows] == [
        ("fiona", "finance", f"finding:{ids[0]}", "<b>paid</b> by hand"),
        (cli_actor(), "admin", f"finding:{ids[1]}", "provider refunded"),
    ]
    assert cli_actor().startswith("cli")


def test_a_payout_over_http_is_audited_in_its_intent_transaction(
    database_url: str, engine: Engine
) -> None:
    """`POST /api/transfers` writes payout.create with the amount and the account."""
    body = {"amount": 250_000, "bank_code": "044", "account_number": "0440000017"}
    with payout_stack(database_url, engine) as (url, _sandbox):
        answer = httpx.post(
            f"{url}/api/transfers", json={**body, "reference": "AUD-PAY"}, headers=bearer(ADMIN)
        )
        again = httpx.post(
            f"{url}/api/transfers", json={**body, "reference": "AUD-PAY"}, headers=bearer(ADMIN)
        )
    assert (answer.status_code, again.status_code) == (201, 200)
    rows = audit_rows(engine)
    assert [(r.operator, r.action, r.subject) for r in rows] == [
        ("admin", "payout.create", "transfer:AUD-PAY")
    ]
    assert rows[0].detail == "amount 250000 kobo to 044/0440000017"


def test_operator_changes_on_the_cli_are_audited(database_url: str, engine: Engine) -> None:
    """`operators add` and `revoke` write operator.add and operator.revoke; the token is in
    neither the audit log nor `operators list`."""
    added = run_cli(database_url, "operators", "add", "olu", "--role", "viewer", "--json")
    listed = run_cli(database_url, "operators", "list", "--json")
    revoked = run_cli(database_url, "operators", "revoke", "olu")
    assert (added.exit_code, listed.exit_code, revoked.exit_code) == (0, 0, 0)
    token = json.loads(added.output)["token"]
    assert token not in listed.output and "olu" in listed.output
    rows = audit_rows(engine)
    assert [(r.action, r.subject) for r in rows] == [
        ("operator.add", "operator:olu"),
        ("operator.revoke", "operator:olu"),
    ]
    assert not any(token in f"{r.subject}{r.detail}" for r in rows)


def _seed_log(engine: Engine) -> dt.datetime:
    start = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    with write_session(engine) as session:
        for n in range(7):
            record(
                session,
                operator="fiona" if n % 2 else "boss",
                role="finance" if n % 2 else "admin",
                action=AuditAction.FINDING_ACK if n % 2 else AuditAction.ENDPOINT_ADD,
                subject=f"thing:{n}",
                detail=None,
                remote_addr="10.0.0.1",
                now=start + dt.timedelta(hours=n),
            )
    return start


def test_the_audit_api_filters_and_pages_newest_first(cast: Cast, engine: Engine) -> None:
    """operator, action and since filter; limit and next_cursor walk every row once."""
    start = _seed_log(engine)
    boss = bearer(cast.tokens["admin"])

    def get(**params: Any) -> dict[str, Any]:
        answer = httpx.get(f"{cast.url}/api/audit", params=params, headers=boss)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    fiona = get(operator="fiona")
    assert [item["subject"] for item in fiona["items"]] == ["thing:5", "thing:3", "thing:1"]
    assert {item["action"] for item in get(action="endpoint.add")["items"]} == {"endpoint.add"}
    later = get(since=(start + dt.timedelta(hours=5)).isoformat())
    assert [item["subject"] for item in later["items"]] == ["thing:6", "thing:5"]
    seen: list[str] = []
    page = get(limit=3)
    while True:
        seen += [item["subject"] for item in page["items"]]
        if page["next_cursor"] is None:
            break
        page = get(limit=3, cursor=page["next_cursor"])
    assert seen == [f"thing:{n}" for n in range(6, -1, -1)]
    assert set(fiona["items"][0]) == {
        "id",
        "at",
        "operator",
        "role",
        "action",
        "subject",
        "detail",
        "remote_addr",
    }


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"action": "drop_table"}, "action"),
        ({"since": "yesterday"}, "since"),
        ({"limit": "0"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"operator": "x" * 65}, "operator"),
    ],
)
def test_bad_audit_filters_are_400_naming_the_parameter(
    cast: Cast, params: dict[str, str], parameter: str
) -> None:
    """A filter that cannot be used is 400 invalid_query naming it, never a 500."""
    answer = httpx.get(f"{cast.url}/api/audit", params=params, headers=bearer(ADMIN))
    assert answer.status_code == 400
    assert (answer.json()["error"], answer.json()["parameter"]) == ("invalid_query", parameter)


def test_the_database_refuses_to_edit_or_delete_the_audit_log(engine: Engine) -> None:
    """UPDATE and DELETE on audit_log fail on both databases (triggers from migration 0005)."""
    _seed_log(engine)
    for statement in ("UPDATE audit_log SET operator = 'nobody'", "DELETE FROM audit_log"):
        with pytest.raises(DBAPIError, match="append-only"), engine.begin() as connection:
            connection.execute(text(statement))
    assert len(audit_rows(engine)) == 7


def test_the_database_refuses_replace_and_truncate_on_the_audit_log(engine: Engine) -> None:
    """SQLite's INSERT OR REPLACE / REPLACE INTO on an existing id and PostgreSQL's TRUNCATE
    fail too, and every row stays as it was (migration 0007)."""
    _seed_log(engine)
    before = [(r.id, r.operator, r.action) for r in audit_rows(engine)]
    first = before[0][0]
    columns = "(id, at, operator, role, action)"
    values = f"({first}, CURRENT_TIMESTAMP, 'nobody', 'admin', 'login')"
    if engine.dialect.name == "sqlite":
        statements = [
            f"INSERT OR REPLACE INTO audit_log {columns} VALUES {values}",
            f"REPLACE INTO audit_log {columns} VALUES {values}",
        ]
    else:
        statements = ["TRUNCATE audit_log", "TRUNCATE audit_log RESTART IDENTITY CASCADE"]
    for statement in statements:
        with pytest.raises(DBAPIError, match="append-only"), engine.begin() as connection:
            connection.execute(text(statement))
    assert [(r.id, r.operator, r.action) for r in audit_rows(engine)] == before
    with engine.begin() as connection:  # a new row is still welcome
        connection.execute(
            text(
                f"INSERT INTO audit_log {columns} VALUES ({first + 1000}, CURRENT_TIMESTAMP, "
                "'later', 'admin', 'login')"
            )
        )
    assert len(audit_rows(engine)) == len(before) + 1


def test_tokens_reach_neither_the_logs_nor_the_audit_log(
    cast: Cast, engine: Engine, capfd: pytest.CaptureFixture[str]
) -> None:
    """Logging in, failing to, and calling with a token leave the tokens out of every log
    line and audit row."""
    token = cast.tokens["finance"]
    httpx.post(f"{cast.url}/login", data={"token": token})
    httpx.post(f"{cast.url}/login", data={"token": "wrong-secret-0123456789"})
    httpx.get(f"{cast.url}/api/transfers", headers=bearer(token))
    httpx.get(f"{cast.url}/api/transfers", headers=bearer("another-wrong-0123456789"))
    logs = "".join(capfd.readouterr())
    rows = " ".join(f"{r.operator} {r.subject} {r.detail}" for r in audit_rows(engine))
    assert "request" in logs  # the request log did run
    for secret in (token, "wrong-secret-0123456789", "another-wrong-0123456789"):
        assert secret not in logs and secret not in rows


def test_an_endpoint_patch_is_audited_with_old_and_new_values(cast: Cast, engine: Engine) -> None:
    """PATCH /api/endpoints/{id} records each changed field's old and new value, no others."""
    boss = bearer(cast.tokens["admin"])
    added = httpx.post(
        f"{cast.url}/api/endpoints", json={"url": "http://10.0.0.7/a"}, headers=boss
    ).json()
    changed = httpx.patch(
        f"{cast.url}/api/endpoints/{added['id']}",
        json={"url": "http://10.0.0.8/b", "description": "orders", "events": None},
        headers=boss,
    )
    assert changed.status_code == 200
    [row] = audit_rows(engine, AuditAction.ENDPOINT_UPDATE)
    assert json.loads(row.detail or "") == {
        "url": {"old": "http://10.0.0.7/a", "new": "http://10.0.0.8/b"},
        "description": {"old": None, "new": "orders"},
    }


def test_reseal_prune_and_cli_enable_disable_are_audited(engine: Engine, database_url: str) -> None:
    """`endpoints reseal`, `checks prune` and `endpoints disable` each write a row as the CLI
    operator; the disable row holds the old and the new value."""
    endpoint_id, _ = relay_support.add_endpoint(engine, "http://10.0.0.7/hook")
    keys = {"PAYRECON_RELAY_KEYS": relay_support.RELAY_KEYS}
    for args in (["endpoints", "reseal"], ["checks", "prune"], ["endpoints", "disable", "1"]):
        result = run_cli(database_url, *args, **keys)
        assert result.exit_code == 0, result.output
    assert endpoint_id == 1
    assert [(r.operator, r.action, r.subject) for r in audit_rows(engine)] == [
        (cli_actor(), "endpoint.reseal", None),
        (cli_actor(), "checks.prune", None),
        (cli_actor(), "endpoint.update", "endpoint:1"),
    ]
    rows = audit_rows(engine)
    assert rows[0].detail == "1 endpoint(s) sealed again with the first key"
    assert rows[1].detail == "deleted 0 provider checks older than 400 days"
    assert json.loads(rows[2].detail or "") == {"enabled": {"old": True, "new": False}}
