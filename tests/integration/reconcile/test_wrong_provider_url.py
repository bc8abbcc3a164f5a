"""A provider URL that is not the provider: a provider error, never "not found" (PRODUCT.md)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, func, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ledger.db import read_session, write_session
from ledger.models import Alert, Transfer
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow
from provider.client import AsyncProviderClient
from reconcile.errors import ProviderMisconfiguredError
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import open_findings, running_sandbox, settings_for
from tests.support.processes import payrecon_env, serving
from tests.support.servers import running_server

REFERENCES = ("W-1", "W-2")
LINE = re.compile(
    r"payrecon: PAYRECON_PROVIDER_BASE_URL does not point at the provider: "
    r"GET (?P<url>http://127\.0\.0\.1:\d+\S*/v1/transaction/W-[12]) answered (?P<status>\d{3}) "
    r".+; no lookup got the provider's answer, so the pass stopped without recording them"
)


def _wrong_answer(request: Request) -> Response:
    kind = request.path_params["kind"]
    if kind == "html":
        return HTMLResponse("<html><body><h1>Not Found</h1></body></html>", status_code=404)
    if kind == "json":
        return JSONResponse({"detail": "Not Found"}, status_code=404)
    return RedirectResponse("https://login.example.test/sso", status_code=302)


@pytest.fixture(scope="module")
def wrong_server() -> Iterator[str]:
    """A server that is not the provider: 404 HTML, 404 JSON without envelope, or 302."""
    app = Starlette(routes=[Route("/{kind}/{rest:path}", _wrong_answer)])
    with running_server(app) as url:
        yield url


def _register(engine: Engine) -> None:
    with write_session(engine) as session:
        for reference in REFERENCES:
            register_expected(session, ExpectedTransfer(reference, 50_000, 100), now=utcnow())


def _once(database_url: str, base_url: str, key: str) -> subprocess.CompletedProcess[str]:
    env = payrecon_env(
        database_url=database_url,
        provider_base_url=base_url,
        provider_secret_key=key,
        not_found_limit="3",
        # Every transfer is due again at once, so three passes are three lookups each.
        check_backoff="0",
        check_backoff_max="0",
        alert_urls="json://127.0.0.1:9/alerts",
        alert_allow_insecure="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "payrecon", "reconcile", "once", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _assert_untouched(engine: Engine) -> None:
    assert open_findings(engine) == set()
    with read_session(engine) as session:
        counts = session.execute(
            select(Transfer.reference, Transfer.not_found_count, Transfer.check_attempts)
        ).all()
        alerts = session.execute(select(func.count()).select_from(Alert)).scalar_one()
    assert sorted(tuple(row) for row in counts) == [(ref, 0, 0) for ref in REFERENCES]
    assert alerts == 0


def test_a_wrong_server_stops_every_pass_and_never_raises_unknown_to_provider(
    database_url: str, engine: Engine, wrong_server: str
) -> None:
    """Passes against a 404 page, a 404 without the envelope and a redirect each exit 1 with
    one line naming PAYRECON_PROVIDER_BASE_URL and the URL; no finding, alert or count."""
    _register(engine)
    key = "sk_test_neverPrintedKey42"
    for kind in ("html", "json", "redirect", "html"):
        base = f"{wrong_server}/{kind}"
        done = _once(database_url, base, key)
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stdout == ""
        line = done.stderr.strip().splitlines()[-1]
        match = LINE.fullmatch(line)
        assert match is not None, line
        assert match["url"].startswith(base + "/v1/transaction/")
        assert match["status"] == ("302" if kind == "redirect" else "404")
        assert key not in done.stderr
    _assert_untouched(engine)


def test_the_receiver_as_provider_url_stops_the_pass(database_url: str, engine: Engine) -> None:
    """Pointing the provider URL at payrecon's own receiver is caught the same way."""
    _register(engine)
    with serving(payrecon_env(database_url=database_url)) as receiver:
        for _ in range(3):
            done = _once(database_url, receiver, "sk_test_neverPrintedKey42")
            assert done.returncode == 1, done.stdout + done.stderr
            match = LINE.fullmatch(done.stderr.strip().splitlines()[-1])
            assert match is not None, done.stderr
            assert match["url"].startswith(f"{receiver}/v1/transaction/")
    _assert_untouched(engine)


def test_the_sandboxs_genuine_not_found_still_counts(database_url: str, engine: Engine) -> None:
    """The real "Transaction not found" of the sandbox raises unknown_to_provider on pass 3."""
    _register(engine)
    with running_sandbox() as sandbox:
        codes = [
            _once(database_url, sandbox.base_url, sandbox.config.secret_key).returncode
            for _ in range(3)
        ]
    assert codes == [0, 0, 0]
    assert open_findings(engine) == {(ref, "unknown_to_provider") for ref in REFERENCES}


class _HalfWrong:
    """A lookup seam where W-1 gets a foreign answer and W-2 the provider's "not found"."""

    def __init__(self, good: AsyncProviderClient, bad: AsyncProviderClient) -> None:
        self.good, self.bad = good, bad

    async def get_transaction(self, reference: str) -> object:
        return await (self.bad if reference == "W-1" else self.good).get_transaction(reference)


def test_a_foreign_answer_among_real_ones_is_a_provider_error_not_a_not_found(
    database_url: str, engine: Engine, wrong_server: str
) -> None:
    """When only some lookups get a foreign answer the pass goes on; those count as provider
    errors and never towards unknown_to_provider."""
    _register(engine)
    with running_sandbox() as sandbox:
        settings = settings_for(database_url, sandbox, check_backoff=0, check_backoff_max=0)
        key = sandbox.config.secret_key

        async def passes() -> list[int]:
            async with (
                AsyncProviderClient(sandbox.base_url, key, max_retries=0) as good,
                AsyncProviderClient(f"{wrong_server}/html", key, max_retries=0) as bad,
            ):
                seam = _HalfWrong(good, bad)
                return [(await run_pass(engine, seam, settings)).foreign_answers for _ in range(4)]

        foreign = asyncio.run(passes())
    assert foreign == [1, 1, 1, 1]
    assert open_findings(engine) == {("W-2", "unknown_to_provider")}
    with read_session(engine) as session:
        row = session.execute(select(Transfer).where(Transfer.reference == "W-1")).scalar_one()
    assert row.not_found_count == 0


def test_run_pass_raises_provider_misconfigured_when_nothing_is_the_provider(
    database_url: str, engine: Engine, wrong_server: str
) -> None:
    """In-process, the pass raises ProviderMisconfiguredError naming the variable."""
    _register(engine)
    with running_sandbox() as sandbox:
        settings = settings_for(database_url, sandbox)

    async def one() -> None:
        async with AsyncProviderClient(f"{wrong_server}/json", "sk_test_x", max_retries=0) as c:
            await run_pass(engine, c, settings)

    with pytest.raises(ProviderMisconfiguredError, match="PAYRECON_PROVIDER_BASE_URL"):
        asyncio.run(one())
    _assert_untouched(engine)
