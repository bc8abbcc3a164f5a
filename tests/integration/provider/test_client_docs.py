"""The client as a merchant's developer uses it: silent by default, and docs/client.md runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.integration.provider.conftest import DEAD_WEBHOOK, Sandbox

DOC = Path(__file__).resolve().parents[3] / "docs" / "client.md"
DOC_URL = "http://127.0.0.1:8100"

# Every path that logs: calls, a retried lookup (warning), a NUBAN warning, the async client.
SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    {setup}
    from provider.client import AsyncProviderClient, ProviderClient
    from provider.errors import ProviderError

    url, key = sys.argv[1], sys.argv[2]
    with ProviderClient(url, key, backoff=0.01, max_retries=1) as client:
        client.banks()
        try:
            client.account_enquiry("0580000018", "058")  # fails the NUBAN check digit
        except ProviderError:
            pass
        try:
            client.get_transaction("nothing-here")  # the sandbox's faults make it a 5xx
        except ProviderError:
            pass

    async def main():
        async with AsyncProviderClient(url, key) as client:
            await client.banks()

    asyncio.run(main())
    """
)


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_client_prints_nothing_when_logging_is_not_configured(sandbox: Sandbox) -> None:
    """In a fresh interpreter with no logging set up, calls, retries and warnings print nothing."""
    sandbox.post("/_sandbox/faults", {"lookup_5xx": 1.0})
    done = _python(SCRIPT.format(setup=""), sandbox.url, sandbox.config.secret_key)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


def test_the_client_logs_through_stdlib_logging_when_configured(sandbox: Sandbox) -> None:
    """With `logging.basicConfig`, the same calls show provider.call and provider.retry lines."""
    sandbox.post("/_sandbox/faults", {"lookup_5xx": 1.0})
    setup = "import logging; logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)"
    done = _python(SCRIPT.format(setup=setup), sandbox.url, sandbox.config.secret_key)
    assert done.returncode == 0, done.stderr
    assert "DEBUG:provider.core:provider.call endpoint='GET /v1/banks' attempts=1" in done.stdout
    assert "WARNING:provider.core:provider.retry endpoint='GET /v1/transaction/" in done.stdout
    assert "WARNING:provider.core:provider.nuban_check_failed" in done.stdout
    assert sandbox.config.secret_key not in done.stdout + done.stderr


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    examples = [block for block in blocks if "ProviderClient(" in block]
    assert len(examples) == 1
    return examples[0]


def test_the_example_in_docs_client_md_runs_as_printed(start_sandbox) -> None:
    """The example of docs/client.md, run in a fresh interpreter against a real sandbox started
    as the page says (key sk_test_accept, a webhook URL), prints what the page shows."""
    sandbox = start_sandbox(secret_key="sk_test_accept", webhook_url=DEAD_WEBHOOK)
    example = _example()
    assert DOC_URL in example
    done = _python(example.replace(DOC_URL, sandbox.url))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 5, done.stdout
    assert re.fullmatch(r"\d+ banks, e\.g\. 044 Access Bank", lines[0])
    assert lines[1] == "account holder: IFEOMA NWOSU"
    assert lines[2] == "enquiry refused: Account name enquiry failed"
    sent = re.fullmatch(r"sent (invoice-[0-9a-f]{12}): pending, fee 1000 kobo", lines[3])
    assert sent is not None
    assert lines[4] == f"{sent[1]}: pending"
