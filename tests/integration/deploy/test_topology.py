"""The compose topology on loopback: migrate, two receivers behind a proxy, sandbox, reconciler.

Real processes on a fresh PostgreSQL database, wired as deploy/compose.yaml wires them: the
receivers believe X-Forwarded-For only from the proxy (127.0.0.1 here, 172.28.0.10 there), the
proxy overwrites that header with the address that connected to it (a fixed documentation
address here, since everything connects from 127.0.0.1), and the webhook allowlist holds only
that address.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import itertools
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.payouts import send_options
from tests.support.processes import PAYRECON, payrecon_env, start_serve, stop
from tests.support.servers import free_port, wait_for_port
from tests.support.webhooks import encode, success_body

pytestmark = pytest.mark.postgres

SENDER = "192.0.2.44"  # TEST-NET-1: the "provider" as the proxy reports it
ADMIN_TOKEN = "topology-admin-token-0123456789"
SANDBOX_KEY = "sk_test_topology0key0001"
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
}


class RoundRobinProxy(ThreadingHTTPServer):
    """nginx in miniature: round robin over the receivers, X-Forwarded-For overwritten."""

    daemon_threads = True

    def __init__(self, port: int, backends: list[int], sender: str) -> None:
        self.backends = backends
        self.sender = sender
        self.hits: collections.Counter[int] = collections.Counter()
        self._turn = itertools.cycle(backends)
        self._lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _ProxyHandler)

    def next_backend(self) -> int:
        """The next receiver's port, counted."""
        with self._lock:
            port = next(self._turn)
            self.hits[port] += 1
            return port


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RoundRobinProxy

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {
            name: value
            for name, value in self.headers.items()
            if name.lower() not in HOP_BY_HOP and name.lower() != "x-forwarded-for"
        }
        # Overwrite, never append: whatever the caller claimed is dropped (like the nginx config).
        headers["X-Forwarded-For"] = self.server.sender
        connection = http.client.HTTPConnection("127.0.0.1", self.server.next_backend(), timeout=15)
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
        except OSError:
            self.send_error(502)
            return
        finally:
            connection.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in HOP_BY_HOP | {"content-length", "date", "server"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _forward
    do_POST = _forward

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads the receivers' own logs when it needs to."""


@contextlib.contextmanager
def running_proxy(port: int, backends: list[int]) -> Iterator[RoundRobinProxy]:
    """The proxy in a thread on 127.0.0.1:`port`."""
    proxy = RoundRobinProxy(port, backends, SENDER)
    thread = threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def running_sandbox(port: int, webhook_url: str, log: Path) -> Iterator[str]:
    """`payrecon sandbox` as compose's sandbox profile runs it, on 127.0.0.1:`port`."""
    with log.open("ab") as output:
        process = subprocess.Popen(
            [
                *PAYRECON,
                "sandbox",
                "--port",
                str(port),
                "--webhook-url",
                webhook_url,
                "--secret-key",
                SANDBOX_KEY,
                "--complete-after",
                "0.2",
                "--seed",
                "7",
                "--webhook-retry",
                "0.2,0.5,1",
            ],
            env=payrecon_env(),
            stdout=output,
            stderr=output,
        )
    try:
        wait_for_port(port, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def _payrecon(
    env: dict[str, str], *args: str, cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PAYRECON, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _wait_for(predicate: Any, *, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_compose_topology_on_loopback(postgres_url: str, tmp_path: Path) -> None:
    """Webhooks pass the proxy, direct ones are refused, and a reconciler confirms a payout."""
    proxy_port, sandbox_port = free_port(), free_port()
    sandbox_url = f"http://127.0.0.1:{sandbox_port}"
    env = payrecon_env(
        database_url=postgres_url,
        trusted_proxies="127.0.0.1",
        webhook_allowed_ips=SENDER,
        admin_token=ADMIN_TOKEN,
        provider_base_url=sandbox_url,
        provider_secret_key=SANDBOX_KEY,
        provider_max_rps="0",
    )

    # The compose `migrate` service.
    migrated = _payrecon(env, "db", "upgrade", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert "database at revision" in migrated.stdout

    receivers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    try:
        for n in (1, 2):
            process, port = start_serve(env, log=tmp_path / f"receiver-{n}.log")
            receivers.append(process)
            ports.append(port)
        with (
            running_proxy(proxy_port, ports) as proxy,
            running_sandbox(
                sandbox_port, f"http://127.0.0.1:{proxy_port}/webhook", tmp_path / "sandbox.log"
            ) as sandbox,
            httpx.Client(base_url=f"http://127.0.0.1:{proxy_port}", timeout=15) as through_proxy,
        ):
            _check_webhooks(through_proxy, proxy, ports)
            reference = _pay_through_sandbox(env, sandbox, through_proxy, tmp_path)
            _check_reconciler(env, through_proxy, reference, tmp_path)
    except BaseException:
        # Shown by pytest with the failure: what each process said.
        for log in sorted(tmp_path.glob("*.log")):
            print(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}")
        raise
    finally:
        for process in receivers:
            stop(process)


def _check_webhooks(client: httpx.Client, proxy: RoundRobinProxy, ports: list[int]) -> None:
    headers = {"Content-Type": "application/json"}
    # Even a forged header is replaced by the proxy: the receivers see SENDER.
    forged = {**headers, "X-Forwarded-For": "198.51.100.9"}
    outcomes = []
    for i in range(4):
        body = encode(success_body(f"TOPO-PRV-{i}", merchant_reference=f"TOPO-ORPHAN-{i}"))
        answer = client.post("/webhook", content=body, headers=forged if i == 0 else headers)
        assert answer.status_code == 200, answer.text
        outcomes.append(answer.json()["outcome"])
    # Round robin sent delivery 1 to the second receiver; its repeat goes to the first.
    repeat = client.post(
        "/webhook",
        content=encode(success_body("TOPO-PRV-1", merchant_reference="TOPO-ORPHAN-1")),
        headers=headers,
    )
    assert repeat.status_code == 200 and repeat.json()["outcome"] == "duplicate"
    assert outcomes == ["accepted"] * 4
    # Both receivers took deliveries, and they share one ledger (the repeat was a duplicate).
    assert all(proxy.hits[port] >= 2 for port in ports), proxy.hits

    # Straight to a receiver, without the proxy: 127.0.0.1 is not on the allowlist.
    for port in ports:
        direct = httpx.post(
            f"http://127.0.0.1:{port}/webhook",
            content=encode(success_body("TOPO-PRV-DIRECT")),
            headers=headers,
            timeout=15,
        )
        assert direct.status_code == 403, direct.text


def _pay_through_sandbox(env: dict[str, str], sandbox: str, client: httpx.Client, cwd: Path) -> str:
    accounts = httpx.get(f"{sandbox}/_sandbox/accounts", timeout=15).json()["accounts"]
    account = next(a for a in accounts if a["behaviour"] == "succeeds")
    reference = "TOPO-PAYOUT-1"
    sent = _payrecon(env, "transfer", "send", *send_options(account, reference, 150_000), cwd=cwd)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    # The sandbox completes it and delivers transfer.success through the proxy.
    def webhooked() -> dict[str, Any] | None:
        record: dict[str, Any] = client.get(f"/api/transfers/{reference}", headers=admin).json()
        return record if record.get("deliveries", 0) >= 1 else None

    try:
        record = _wait_for(webhooked, timeout=60, what="the sandbox's webhook through the proxy")
    except AssertionError:
        attempts = httpx.get(f"{sandbox}/_sandbox/webhooks", timeout=15).text
        raise AssertionError(f"no webhook arrived; the sandbox's attempts: {attempts}") from None
    assert record["status"] == "successful" and record["confirmed"] is False
    return reference


def _check_reconciler(env: dict[str, str], client: httpx.Client, reference: str, cwd: Path) -> None:
    result = _payrecon(env, "reconcile", "once", "--json", cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    for key in (
        "checked",
        "confirmed",
        "pending",
        "findings_raised",
        "findings_resolved",
        "provider_errors",
    ):
        assert key in summary, key
    assert summary["checked"] >= 1 and summary["confirmed"] >= 1, summary
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    record = client.get(f"/api/transfers/{reference}", headers=admin).json()
    assert record["confirmed"] is True and record["status"] == "successful", record
