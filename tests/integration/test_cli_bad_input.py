"""Bad numbers and dates on the command line: exit 2 with one line, nothing written, nothing
sent (PRODUCT.md: Numbers from people)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import Engine, func, select

from ledger.db import read_session
from ledger.models import Transfer
from payrecon.cli import cli
from tests.integration.reconcile.helpers import running_sandbox
from tests.support.cli import one_line, run_cli
from tests.support.numbers import HOSTILE_TEXT
from tests.support.payouts import send_options


def _stored(engine: Engine) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(Transfer)).scalar_one())


def test_hostile_expect_amounts_and_fees_exit_2(database_url: str, engine: Engine) -> None:
    """`transfer expect --amount/--fee` refuse each hostile value with one line naming the
    option and the value; nothing is registered."""
    for text in HOSTILE_TEXT:
        amount = run_cli(
            database_url, "transfer", "expect", "--reference", "E-1", f"--amount={text}"
        )
        fee = run_cli(
            database_url,
            "transfer",
            "expect",
            "--reference",
            "E-2",
            "--amount",
            "100",
            f"--fee={text}",
        )
        assert one_line(amount).startswith("payrecon: --amount: must be"), text
        assert one_line(fee).startswith("payrecon: --fee: must be"), text
    assert _stored(engine) == 0


def test_hostile_payout_amounts_exit_2_before_any_call(database_url: str, engine: Engine) -> None:
    """`transfer send --amount` refuses each hostile value (and 0) with one line; nothing is
    recorded and nothing reaches the provider."""
    with running_sandbox() as sandbox:
        env = {
            "PAYRECON_PROVIDER_BASE_URL": sandbox.base_url,
            "PAYRECON_PROVIDER_SECRET_KEY": sandbox.config.secret_key,
        }
        options = send_options(sandbox.accounts()[0], "S-1")
        for text in [*HOSTILE_TEXT, "0"]:
            args = [*options[2:], f"--amount={text}"]
            result = run_cli(database_url, "transfer", "send", *args, **env)
            assert one_line(result).startswith("payrecon: --amount: must be"), text
        assert sandbox.transfers() == []
    assert _stored(engine) == 0


def test_hostile_csv_cells_refuse_the_whole_import(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A hostile amount or fee cell stops `transfer import` with one line naming the file,
    the line and the column; the valid row before it is not imported either."""
    csv_file = tmp_path / "import.csv"
    empty_means_unset = {"", " "}  # an empty fee cell is a fee not given
    cases = [("amount", text) for text in HOSTILE_TEXT]
    cases += [("fee", text) for text in HOSTILE_TEXT if text not in empty_means_unset]
    for column, text in cases:
        row = f"BAD-1,{text},5" if column == "amount" else f"BAD-1,100,{text}"
        csv_file.write_text(f"reference,amount,fee\nGOOD-1,100,5\n{row}\n", encoding="utf-8")
        line = one_line(run_cli(database_url, "transfer", "import", str(csv_file)))
        assert line.startswith(f"payrecon: {csv_file}:3: {column}: "), (column, text, line)
    assert _stored(engine) == 0


def test_days_out_of_range_exit_2(database_url: str) -> None:
    """`report --since/--until` and `replay --since` outside the days a period can hold (or
    not YYYY-MM-DD at all) exit 2 with one line naming the option, never a traceback."""
    cases = {
        ("report", "--until", "9999-12-31"): "--until must be a day from 0001-01-02 to 9999-12-30",
        ("report", "--since", "0001-01-01"): "--since must be a day from 0001-01-02 to 9999-12-30",
        ("report", "--since", "20240101xx"): "--since must be a day as YYYY-MM-DD",
        ("report", "--until", "2024-W01-1"): "--until must be a day as YYYY-MM-DD",
        ("replay", "--since", "0001-01-01"): "--since must be a day from 0001-01-02 to 9999-12-30",
        ("replay", "--since", "２０２４-01-01"): "--since must be a day as YYYY-MM-DD",
    }
    for args, needle in cases.items():
        line = one_line(run_cli(database_url, *args))
        assert needle in line, (args, line)
    edges = run_cli(database_url, "report", "--since", "0001-01-02", "--until", "9999-12-30")
    replayed = run_cli(database_url, "replay", "--since", "9999-12-30")
    assert (edges.exit_code, replayed.exit_code) == (0, 0), edges.output + replayed.output


def test_hostile_provider_command_amounts_exit_2() -> None:
    """`provider collection create --amount` and `provider va create --expected-amount` take
    the same rule, refused while parsing, before any setting is read or call made."""
    for text in HOSTILE_TEXT:
        collection = CliRunner().invoke(
            cli, ["provider", "collection", "create", "--reference", "C-1", f"--amount={text}"]
        )
        account = CliRunner().invoke(
            cli, ["provider", "va", "create", "--type", "dynamic", f"--expected-amount={text}"]
        )
        assert one_line(collection).startswith("payrecon: --amount: must be"), text
        assert one_line(account).startswith("payrecon: --expected-amount: must be"), text
