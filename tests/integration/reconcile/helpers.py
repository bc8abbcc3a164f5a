"""Helpers for reconciler integration tests: a running sandbox, settings, webhook evidence."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import Engine, select

from ledger.db import write_session
from ledger.models import Finding, Transfer
from ledger.queries import find_transfer
from payrecon.settings import Settings, load_settings
from sandbox.app import create_app
from sandbox.config import SandboxConfig
from tests.support.servers import running_server


@dataclass
class Sandbox:
    """A running emulator: its base URL, its keys and a control client."""

    base_url: str
    config: SandboxConfig
    http: httpx.Client

    def accounts(self, behaviour: str = "succeeds") -> list[dict[str, Any]]:
        """The documented test accounts with that behaviour."""
        rows = self.http.get("/_sandbox/accounts").json()["accounts"]
        return [a for a in rows if a["behaviour"] == behaviour]

    def transfers(self) -> list[dict[str, Any]]:
        """Every transfer's truth (faults included)."""
        return list(self.http.get("/_sandbox/transfers").json()["transfers"])

    def faults(self, **faults: object) -> None:
        """Replace the active fault set."""
        self.http.post("/_sandbox/faults", json=faults).raise_for_status()


@contextlib.contextmanager
def running_sandbox(**config: Any) -> Iterator[Sandbox]:
    """Start the emulator on a free loopback port (webhooks go to a closed port, no retries)."""
    options: dict[str, Any] = {
        "complete_after": 0.05,
        "webhook_url": "http://127.0.0.1:9/unused",
        "webhook_retry_delays": (),
        "webhook_timeout": 0.5,
    }
    options.update(config)
    cfg = SandboxConfig(**options)
    with running_server(create_app(cfg)) as base, httpx.Client(base_url=base, timeout=30) as http:
        yield Sandbox(base, cfg, http)


def settings_for(database_url: str, sandbox: Sandbox, **overrides: Any) -> Settings:
    """Settings pointing at the ledger and the sandbox."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "provider_base_url": sandbox.base_url,
        "provider_secret_key": sandbox.config.secret_key,
        "provider_max_rps": 0,
        "provider_concurrency": 16,
    }
    values.update(overrides)
    return load_settings(**values)


def apply_webhook(
    engine: Engine,
    reference: str,
    *,
    status: str,
    amount: int | None,
    fee: int | None,
    failure_reason: str | None,
    now: dt.datetime,
) -> None:
    """Write webhook evidence exactly as the receiver does (first outcome stays)."""
    with write_session(engine) as session:
        transfer = find_transfer(session, reference, for_update=True)
        assert transfer is not None
        if transfer.webhook_status is None:
            transfer.webhook_status = status
            if status == "successful":
                transfer.webhook_amount, transfer.webhook_fee = amount, fee
            else:
                transfer.failure_reason = failure_reason
            if not transfer.confirmed:
                transfer.status = status
        transfer.next_check_at = now
        transfer.updated_at = now


def open_findings(engine: Engine) -> set[tuple[str, str]]:
    """Every open finding as (merchant reference, kind)."""
    with write_session(engine) as session:
        rows = session.execute(
            select(Transfer.reference, Finding.kind)
            .join(Transfer, Transfer.id == Finding.subject_id)  # type: ignore[arg-type]
            .where(Finding.subject == "transfer")  # type: ignore[arg-type]
            .where(Finding.resolved_at.is_(None))  # type: ignore[union-attr]
        ).all()
    return {(r[0], r[1]) for r in rows}


class AlertInbox:
    """A local JSON alert receiver (apprise `json://`) that counts what it got."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def app(self) -> Any:
        """The Starlette app recording every POST body."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def hook(request: Request) -> JSONResponse:
            self.received.append(await request.json())
            return JSONResponse({"ok": True})

        return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


class FakeLookup:
    """An async provider whose lookups answer from a dict (reference → Transaction or error)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def get_transaction(self, reference: str) -> Any:
        self.calls.append(reference)
        answer = self.answers[reference]
        if isinstance(answer, Exception):
            raise answer
        return answer
