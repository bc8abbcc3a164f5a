"""No secret reaches any output of any command, on success or failure (spec: Settings)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.support.processes import PAYRECON, payrecon_env, serving
from tests.support.secrets import ALL_SECRETS, SHOWN_NEVER, secret_settings, with_password
from tests.support.servers import free_port

# Each command once on a path that succeeds and once on one that fails.
COMMANDS = [
    ["db", "upgrade"],
    ["transfer", "expect", "--reference", "S-1", "--amount", "15000"],
    ["transfer", "expect", "--reference", "S-1", "--amount", "16000"],  # conflict: exit 1
    ["transfer", "expect", "--reference", "S-2", "--amount", "1.5"],  # bad amount: exit 2
    ["transfer", "import", "expected.csv"],
    ["transfer", "import", "missing.csv"],
    [
        *("transfer", "send", "--amount", "15000", "--bank-code", "058"),
        *("--account-number", "0123456789", "--reference", "S-3"),
    ],  # the provider does not answer: exit 1
    ["replay"],
    ["replay", "--since", "yesterday"],
    ["report"],
    ["report", "--format", "xlsx"],
    ["findings", "list"],
    ["findings", "ack", "999", "--note", "seen"],
    ["reconcile", "once", "--json"],
    ["provider", "banks"],
    ["endpoints", "add", "http://127.0.0.1:9/hook"],
    ["endpoints", "add", "ftp://127.0.0.1/hook"],  # bad URL: exit 2
    ["endpoints", "list"],
    ["endpoints", "rotate-secret", "1"],
    ["endpoints", "remove", "99"],  # no such endpoint: exit 2
]


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = payrecon_env(**extra)
    env.update(secret_settings(with_password(database_url)))
    # Nothing listens there (every provider call fails), and no alert is due on this ledger.
    env["PAYRECON_PROVIDER_BASE_URL"] = f"http://127.0.0.1:{free_port()}"
    return env


def _leaks(text: str) -> list[str]:
    return [secret for secret in SHOWN_NEVER if secret in text]


def test_no_command_prints_a_secret(database_url: str, tmp_path: Path) -> None:
    """Every command, succeeding or failing, with every secret set, prints none of them on
    stdout or stderr (log lines and error lines alike)."""
    (tmp_path / "expected.csv").write_text("reference,amount\nS-4,100\n")
    env = _env(database_url)
    codes = []
    for args in COMMANDS:
        result = subprocess.run(
            [*PAYRECON, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert _leaks(result.stdout + result.stderr) == [], args
        assert "Traceback" not in result.stderr, args
        codes.append(result.returncode)
    assert codes[:4] == [0, 0, 1, 2] and codes[6] == 1  # the failing paths did fail
    assert codes[-5:] == [0, 2, 0, 0, 2]


def test_an_unreachable_database_is_reported_without_its_password(tmp_path: Path) -> None:
    """A PostgreSQL URL whose server does not answer gives one line without the password."""
    url = with_password(f"postgresql://payrecon@127.0.0.1:{free_port()}/ledger")
    result = subprocess.run(
        [*PAYRECON, "report"], env=_env(url), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and result.stderr.startswith("payrecon: database unavailable")
    assert len(result.stderr.splitlines()) == 1 and _leaks(result.stderr) == []


def test_serve_logs_no_secret(database_url: str, tmp_path: Path) -> None:
    """The receiver's log (start, requests refused, shut-down) holds no secret."""
    log = tmp_path / "serve.log"
    token = ALL_SECRETS["PAYRECON_WEBHOOK_TOKEN"]
    with serving(_env(database_url), log=log) as base:
        statuses = [
            httpx.get(f"{base}/readyz", timeout=10).status_code,
            httpx.post(f"{base}/webhook/{token}", content=b"{}", timeout=10).status_code,
            httpx.post(f"{base}/webhook/wrong{token}", content=b"{}", timeout=10).status_code,
            httpx.get(
                f"{base}/api/transfers",
                headers={"Authorization": f"Bearer {ALL_SECRETS['PAYRECON_ADMIN_TOKEN']}x"},
                timeout=10,
            ).status_code,
        ]
    text = log.read_text()
    assert statuses[0] == 200 and statuses[2] in {401, 404} and statuses[3] == 401
    assert '"event":"webhook refused"' in text  # the refusals were logged
    assert _leaks(text) == []
