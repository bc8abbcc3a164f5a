"""`payrecon provider …` run as a user runs it, against a real sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.integration.provider.conftest import Sandbox
from tests.support.servers import running_server


def _run(
    sandbox: Sandbox | None, *args: str, key: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
    if sandbox is not None:
        env["PAYRECON_PROVIDER_BASE_URL"] = sandbox.url
        env["PAYRECON_PROVIDER_SECRET_KEY"] = key or sandbox.config.secret_key
    return subprocess.run(
        [sys.executable, "-m", "payrecon", "provider", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_banks_table(sandbox: Sandbox) -> None:
    """`provider banks` prints a table of codes and names and exits 0."""
    done = _run(sandbox, "banks")
    assert done.returncode == 0, done.stderr
    assert "Guaranty Trust Bank" in done.stdout and "058" in done.stdout


def test_enquiry_json(sandbox: Sandbox) -> None:
    """`provider enquiry --json` prints the enquiry as JSON."""
    bank_code, number = sandbox.good_account()
    done = _run(sandbox, "enquiry", "--account-number", number, "--bank-code", bank_code, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["account_number"] == number


def test_wrong_key_is_one_line_and_exit_1(sandbox: Sandbox) -> None:
    """A refused key prints one line naming the variable, exit 1, and never the key."""
    wrong = "sk_test_wrongCliKey0000000"
    done = _run(sandbox, "banks", key=wrong)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "payrecon: the provider refused the key in PAYRECON_PROVIDER_SECRET_KEY "
        "(401 Unauthenticated)"
    ]
    assert wrong not in done.stdout + done.stderr


def test_missing_settings_exit_2() -> None:
    """Without provider settings the command stops with exit 2 naming the variable."""
    done = _run(None, "banks")
    assert done.returncode == 2
    assert "PAYRECON_PROVIDER_BASE_URL" in done.stderr


def test_bad_account_number_exit_2(sandbox: Sandbox) -> None:
    """An account number that is not 10 digits is a usage error (exit 2), nothing sent."""
    done = _run(sandbox, "enquiry", "--account-number", "123", "--bank-code", "058")
    assert done.returncode == 2
    assert "10 digits" in done.stderr


def test_virtual_account_and_collection_commands(sandbox: Sandbox) -> None:
    """va create/get/deactivate and collection create/lookup work end to end."""
    created = _run(sandbox, "va", "create", "--type", "static", "--first-name", "Ada", "--json")
    assert created.returncode == 0, created.stderr
    uid = json.loads(created.stdout)["uid"]
    gone = _run(sandbox, "va", "deactivate", uid, "--json")
    assert json.loads(gone.stdout)["status"] == "inactive"
    listed = _run(sandbox, "va", "list", "--status", "inactive", "--json")
    assert [item["uid"] for item in json.loads(listed.stdout)["items"]] == [uid]
    made = _run(sandbox, "collection", "create", "--reference", "cli-col", "--amount", "5000")
    assert made.returncode == 0, made.stderr
    looked = _run(sandbox, "collection", "cli-col", "--json")
    assert json.loads(looked.stdout)["status"] == "pending"


def test_unknown_transaction_exit_1(sandbox: Sandbox) -> None:
    """A lookup of an unknown reference prints the provider's message, exit 1."""
    done = _run(sandbox, "transaction", "nope")
    assert done.returncode == 1
    assert done.stderr.strip() == "payrecon: provider: Transaction not found"


def test_enquiry_with_an_unlisted_bank_code_names_it_and_points_at_banks(sandbox: Sandbox) -> None:
    """A bank code the provider does not list is one line naming it and `provider banks`, exit 2."""
    _, number = sandbox.good_account()
    done = _run(sandbox, "enquiry", "--account-number", number, "--bank-code", "999")
    assert done.returncode == 2
    # Before it, the client may log that the number is no NUBAN at an unknown bank.
    assert done.stderr.strip().splitlines()[-1] == (
        "payrecon: bank code 999 is not one the provider knows; "
        "see `payrecon provider banks` for the codes"
    )


def test_enquiry_refused_at_a_listed_bank_says_the_account_is_not_there(sandbox: Sandbox) -> None:
    """The sandbox's enquiry-failing account at a listed bank is an enquiry failure, exit 1."""
    account = sandbox.accounts("enquiry_fails")[0]
    done = _run(
        sandbox,
        "enquiry",
        "--account-number",
        account["account_number"],
        "--bank-code",
        account["bank_code"],
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"payrecon: account name enquiry failed: bank {account['bank_code']} holds no account "
        f"{account['account_number']} (or the details are wrong)"
    ]


def test_a_base_url_that_is_not_the_provider_is_named() -> None:
    """A 404 web page instead of the provider: one line naming PAYRECON_PROVIDER_BASE_URL and
    the URL that answered, exit 1, never the key."""
    page = HTMLResponse("<html><h1>Not Found</h1></html>", status_code=404)
    app = Starlette(routes=[Route("/{rest:path}", lambda _request: page)])
    key = "sk_test_cliKeyNeverShown0"
    with running_server(app) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
        env.update(PAYRECON_PROVIDER_BASE_URL=url, PAYRECON_PROVIDER_SECRET_KEY=key)
        done = subprocess.run(
            [sys.executable, "-m", "payrecon", "provider", "banks"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "payrecon: PAYRECON_PROVIDER_BASE_URL does not point at the provider: "
        f"GET {url}/v1/banks answered 404 with a text/html body, not the provider's JSON"
    ]
    assert key not in done.stdout + done.stderr


def test_payrecon_commands_still_show_the_clients_log_lines(sandbox: Sandbox) -> None:
    """Under payrecon's logging set-up the client's warnings are structured JSON lines on stderr."""
    done = _run(sandbox, "enquiry", "--account-number", "0580000018", "--bank-code", "058")
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    warning = [line for line in lines if line.get("event") == "provider.nuban_check_failed"]
    assert len(warning) == 1
    assert warning[0]["level"] == "warning"
    assert (warning[0]["account_number"], warning[0]["bank_code"]) == ("0580000018", "058")
    assert sandbox.config.secret_key not in done.stdout + done.stderr
