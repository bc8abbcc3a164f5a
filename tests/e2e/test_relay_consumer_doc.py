"""The consumer printed in docs/relay.md, run as printed under uvicorn on a loopback port."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from relay.keys import new_secret
from relay.signing import headers
from tests.support.docs import marked_block
from tests.support.processes import stop
from tests.support.servers import free_port, wait_for_port


@pytest.fixture
def consumer(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """The documented consumer running in its own process: (URL, its secret, its log)."""
    (tmp_path / "consumer.py").write_text(marked_block("relay.md", "relay-consumer").code)
    secret, port, log = new_secret(), free_port(), tmp_path / "consumer.log"
    env = {"PATH": "/usr/bin:/bin", "PAYRECON_ENDPOINT_SECRET": secret}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "consumer:app", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/payrecon-events", secret, log
    finally:
        stop(process)


def _event(sequence: int, reference: str = "PAYOUT-1") -> str:
    return orjson.dumps(
        {
            "id": f"evt_{sequence:026d}",
            "type": "transfer.confirmed",
            "timestamp": "2026-11-23T10:00:00Z",
            "sequence": sequence,
            "data": {"reference": reference, "status": "successful"},
        }
    ).decode()


def _send(url: str, secrets: list[str], body: str) -> int:
    event_id = orjson.loads(body)["id"]
    now = int(dt.datetime.now(dt.UTC).timestamp())
    return httpx.post(url, content=body, headers=headers(secrets, event_id, now, body)).status_code


def test_the_documented_consumer_verifies_and_drops_stale_sequences(
    consumer: tuple[str, str, Path],
) -> None:
    """A signed event is handled once; a repeat, an older sequence and a forged one are not."""
    url, secret, log = consumer
    assert _send(url, [secret], _event(2)) == 204
    assert _send(url, [secret], _event(2)) == 204  # a repeat
    assert _send(url, [secret], _event(1)) == 204  # older news
    assert _send(url, [new_secret()], _event(3)) == 400  # signed with another secret
    assert _send(url, [new_secret(), secret], _event(3)) == 204  # during a rotation
    assert _send(url, [secret], _event(1, reference="PAYOUT-2")) == 204  # another subject
    handled = [line for line in log.read_text().splitlines() if line.startswith("verified")]
    assert handled == [
        "verified transfer.confirmed PAYOUT-1 successful",
        "verified transfer.confirmed PAYOUT-1 successful",
        "verified transfer.confirmed PAYOUT-2 successful",
    ]
