"""`payrecon transfer send` on a terminal shows the recipient and amount and asks before paying."""

from __future__ import annotations

import subprocess

from sqlalchemy import Engine

from ledger.db import read_session
from ledger.queries import find_transfer
from tests.integration.reconcile.helpers import Sandbox, running_sandbox
from tests.support.payouts import send_options
from tests.support.processes import PAYRECON, payrecon_env
from tests.support.terminal import run_on_terminal

PROMPT = "Send this payout?"


def _env(database_url: str, sandbox: Sandbox) -> dict[str, str]:
    return payrecon_env(
        database_url=database_url,
        provider_base_url=sandbox.base_url,
        provider_secret_key=sandbox.config.secret_key,
    )


def _wallet(sandbox: Sandbox) -> int:
    return int(sandbox.http.get("/_sandbox/wallet").json()["data"]["balance"])


def _send(sandbox: Sandbox, reference: str, *extra: str) -> list[str]:
    return [
        *PAYRECON,
        "transfer",
        "send",
        *send_options(sandbox.accounts()[0], reference, 15_000),
        *extra,
    ]


def test_answering_no_on_a_terminal_pays_nothing(database_url: str, engine: Engine) -> None:
    """The prompt names the account holder, bank and ₦150.00; "n" sends and records nothing."""
    with running_sandbox() as sandbox:
        account = sandbox.accounts()[0]
        before = _wallet(sandbox)
        run = run_on_terminal(
            _send(sandbox, "ASK-N"), _env(database_url, sandbox), answers=[(PROMPT, "n")]
        )
        assert run.exit_code == 1, run.output
        assert sandbox.transfers() == []
        assert _wallet(sandbox) == before
    shown = run.output
    assert account["account_name"] in shown and account["bank_name"] in shown
    assert account["account_number"] in shown and "₦150.00" in shown
    assert "[y/N]" in shown and "not sent" in shown
    with read_session(engine) as session:
        assert find_transfer(session, "ASK-N") is None


def test_answering_yes_on_a_terminal_pays(database_url: str, engine: Engine) -> None:
    """ "y" at the prompt sends the payout: the sandbox has it, the wallet paid amount and fee."""
    with running_sandbox() as sandbox:
        before = _wallet(sandbox)
        run = run_on_terminal(
            _send(sandbox, "ASK-Y"), _env(database_url, sandbox), answers=[(PROMPT, "y")]
        )
        assert run.exit_code == 0, run.output
        truth = sandbox.transfers()
        after = _wallet(sandbox)
    assert [t["merchant_reference"] for t in truth] == ["ASK-Y"]
    assert before - after == 15_000 + truth[0]["fee"]
    assert "ASK-Y: sent" in run.output
    with read_session(engine) as session:
        assert find_transfer(session, "ASK-Y") is not None


def test_yes_flag_and_scripts_are_never_asked(database_url: str, engine: Engine) -> None:
    """`--yes` on a terminal, and any run whose stdin is not a terminal, pay without a prompt."""
    with running_sandbox() as sandbox:
        env = _env(database_url, sandbox)
        flagged = run_on_terminal(_send(sandbox, "ASK-FLAG", "--yes"), env)
        piped = subprocess.run(
            _send(sandbox, "ASK-PIPE"),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        paid = sorted(t["merchant_reference"] for t in sandbox.transfers())
    assert flagged.exit_code == 0 and PROMPT not in flagged.output, flagged.output
    assert piped.returncode == 0 and PROMPT not in piped.stdout + piped.stderr, piped.stderr
    assert paid == ["ASK-FLAG", "ASK-PIPE"]
