"""The statements and periods API and commands walked with hostile input: every answer is a
clear 4xx (or exit 2) or a correct success, never a 500 or a traceback (both databases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from tests.integration.admin.conftest import Cast, audit_rows
from tests.integration.statements.ledger_rows import HEADER, SAMPLE, sample_ledger
from tests.support.cli import run_cli

BODY = SAMPLE.read_bytes()
IMPORT = "/api/statements?mapping=sandbox"
MONTH = {"account": "provider-wallet", "since": "2026-11-01", "until": "2026-11-30"}
BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
    b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">'
    b'<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>'
    b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">&e;</Document>'
)
XXE = (
    b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">&x;</Document>'
)
ROW = '2026-11-02,,R-1,{narration},1.00,,"1,000.00"\n'
HUGE_FIELD = (HEADER + ROW.format(narration="x" * 1_000_000)).encode()
BIG_CURSOR = "A" * 20_000

# (method, path, query, json body or raw bytes, the statuses that are right)
CASES: dict[str, tuple[str, str, dict[str, str] | None, Any, set[int]]] = {
    "lines huge cursor": ("GET", "/api/statements/lines", {"cursor": BIG_CURSOR}, None, {400}),
    "imports huge cursor": ("GET", "/api/statements", {"cursor": BIG_CURSOR}, None, {400}),
    "lines NUL cursor": ("GET", "/api/statements/lines", {"cursor": "sl\x00x"}, None, {400}),
    "lines NUL account": ("GET", "/api/statements/lines", {"account": "a\x00b"}, None, {400}),
    "lines unicode account": (
        "GET",
        "/api/statements/lines",
        {"account": "Ṣọ̀lá wallet 💰"},
        None,
        {200, 404},
    ),
    "lines since after until": (
        "GET",
        "/api/statements/lines",
        {"since": "2026-11-30", "until": "2026-11-01"},
        None,
        {400},
    ),
    "lines day zero": ("GET", "/api/statements/lines", {"since": "0000-01-01"}, None, {400}),
    "lines unknown state": ("GET", "/api/statements/lines", {"state": "x\x00"}, None, {400}),
    "tie-out first day": (
        "GET",
        "/api/periods/tie-out",
        {**MONTH, "since": "0001-01-02"},
        None,
        {422},
    ),
    "tie-out last day": (
        "GET",
        "/api/periods/tie-out",
        {**MONTH, "until": "9999-12-30"},
        None,
        {422},
    ),
    "tie-out since after until": (
        "GET",
        "/api/periods/tie-out",
        {**MONTH, "since": "2026-12-01"},
        None,
        {422},
    ),
    "tie-out unicode account": (
        "GET",
        "/api/periods/tie-out",
        {**MONTH, "account": "Ṣọ̀lá 💰"},
        None,
        {404},
    ),
    "tie-out NUL account": (
        "GET",
        "/api/periods/tie-out",
        {**MONTH, "account": "a\x00"},
        None,
        {400},
    ),
    "close first day": (
        "POST",
        "/api/periods/close",
        None,
        {**MONTH, "since": "0001-01-02"},
        {422},
    ),
    "close last day": ("POST", "/api/periods/close", None, {**MONTH, "until": "9999-12-30"}, {422}),
    "close since after until": (
        "POST",
        "/api/periods/close",
        None,
        {**MONTH, "since": "2026-12-01"},
        {422},
    ),
    "close NUL account": ("POST", "/api/periods/close", None, {**MONTH, "account": "\x00"}, {422}),
    "close long account": (
        "POST",
        "/api/periods/close",
        None,
        {**MONTH, "account": "a" * 1000},
        {422},
    ),
    "close huge account": (
        "POST",
        "/api/periods/close",
        None,
        {**MONTH, "account": "a" * 100_000},
        {413},
    ),
    "close not an object": ("POST", "/api/periods/close", None, ["x"], {400, 422}),
    "import unknown mapping": ("POST", "/api/statements", {"mapping": "nope"}, BODY, {400}),
    "import mapping traversal": (
        "POST",
        "/api/statements",
        {"mapping": "../../etc/passwd"},
        BODY,
        {400},
    ),
    "import mapping absolute toml": (
        "POST",
        "/api/statements",
        {"mapping": "/work/x.toml"},
        BODY,
        {400},
    ),
    "import mapping NUL": ("POST", "/api/statements", {"mapping": "sandbox\x00"}, BODY, {400}),
    "import unicode account": (
        "POST",
        "/api/statements",
        {"mapping": "sandbox", "account": "Ṣọ̀lá 💰"},
        BODY,
        {201},
    ),
    "import empty file": ("POST", IMPORT, None, b"", {422}),
    "import header only": ("POST", IMPORT, None, HEADER.encode(), {201, 422}),
    "import 1 MB field": ("POST", IMPORT, None, HUGE_FIELD, {201, 422}),
    "import NUL bytes": ("POST", IMPORT, None, HEADER.encode() + b"\x00" * 100, {422}),
    "import not utf-8": ("POST", IMPORT, None, HEADER.encode() + b"\xff\xfe\xfa,\n", {422}),
    "import mt940 garbage": (
        "POST",
        "/api/statements",
        {"format": "mt940"},
        b":20:X\n:25:\x00\n:61:garbage\n-}",
        {422},
    ),
    "import camt garbage": (
        "POST",
        "/api/statements",
        {"format": "camt053"},
        b"<Document><Stmt><Ntry>",
        {422},
    ),
    "import camt entity bomb": ("POST", "/api/statements", {"format": "camt053"}, BOMB, {422}),
    "import camt external entity": ("POST", "/api/statements", {"format": "camt053"}, XXE, {422}),
    "import auto garbage": ("POST", "/api/statements", None, b"\x00\xff" * 500, {422}),
    "match NUL transfer": (
        "POST",
        "/api/statements/lines/1/match",
        None,
        {"transfer": "inv\x00"},
        {404, 409, 422},
    ),
    "match huge line": ("POST", "/api/statements/lines/1/match", None, {"line": 10**40}, {422}),
    "match huge path id": (
        "POST",
        "/api/statements/lines/" + "9" * 400 + "/match",
        None,
        {"transfer": "x"},
        {400, 404},
    ),
    "ignore huge note": (
        "POST",
        "/api/statements/lines/1/ignore",
        None,
        {"as": "other", "note": "n" * 2_000_000},
        {400, 404, 413, 422},
    ),
    "ignore NUL as": (
        "POST",
        "/api/statements/lines/1/ignore",
        None,
        {"as": "other\x00", "note": "n"},
        {404, 422},
    ),
}

# What the refusal says, where a vague "cannot be stored or looked up" would hide a bug.
SAYS = {
    "tie-out first day": "since must be a day from 1900-01-01 to 9000-12-31",
    "tie-out last day": "until must be a day from 1900-01-01 to 9000-12-31",
    "close first day": "since must be a day from 1900-01-01 to 9000-12-31",
    "close last day": "until must be a day from 1900-01-01 to 9000-12-31",
    "lines since after until": "before since",
    "tie-out since after until": "before since",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_statement_requests_are_clear_refusals(
    case: str, cast: Cast, engine: Engine
) -> None:
    """Each hostile request is answered with one of the statuses that are right for it, a
    JSON body with a message when refused, never a 500."""
    method, path, query, body, expected = CASES[case]
    sample_ledger(engine)
    kwargs: dict[str, Any] = {"params": query}
    if isinstance(body, bytes):
        kwargs["content"] = body
    elif body is not None:
        kwargs["json"] = body
    with httpx.Client(base_url=cast.url, auth=("x", cast.tokens["finance"]), timeout=60) as client:
        # The wallet account exists, so a period request reaches the tie-out itself.
        assert client.post(IMPORT, content=BODY).status_code == 201
        answer = client.request(method, path, **kwargs)
    assert answer.status_code in expected, (case, answer.status_code, answer.text[:300])
    if answer.status_code >= 400:
        assert answer.json()["message"], case
    if case in SAYS:
        assert SAYS[case] in answer.json()["message"], (case, answer.text)
    if method == "POST" and path.startswith("/api/statements") and answer.status_code >= 400:
        assert len(audit_rows(engine, "statement.import")) == 1


def test_a_unicode_account_name_comes_back_intact(cast: Cast, engine: Engine) -> None:
    """An account named in Yoruba with an emoji is stored, listed and tied out by that name."""
    name = "Ṣọ̀lá 💰"
    sample_ledger(engine)
    with httpx.Client(base_url=cast.url, auth=("x", cast.tokens["finance"]), timeout=60) as client:
        made = client.post(
            "/api/statements", params={"mapping": "sandbox", "account": name}, content=BODY
        )
        assert made.status_code == 201, made.text
        lines = client.get("/api/statements/lines", params={"account": name})
        assert lines.status_code == 200 and len(lines.json()["items"]) == 7
        tie = client.get("/api/periods/tie-out", params={**MONTH, "account": name})
        assert tie.status_code == 200 and tie.json()["account"] == name


CLI_CASES: dict[str, tuple[tuple[str, ...], str]] = {
    "close first day": (
        (
            "period",
            "close",
            "--account",
            "provider-wallet",
            "--since",
            "0001-01-02",
            "--until",
            "2026-11-30",
        ),
        "since",
    ),
    "close last day": (
        (
            "period",
            "close",
            "--account",
            "provider-wallet",
            "--since",
            "2026-11-01",
            "--until",
            "9999-12-30",
            "--lock",
        ),
        "until",
    ),
    "close just before the earliest day": (
        (
            "period",
            "close",
            "--account",
            "provider-wallet",
            "--since",
            "1899-12-31",
            "--until",
            "2026-11-30",
        ),
        "since",
    ),
    "close NUL account": (
        ("period", "close", "--account", "a\x01", "--since", "2026-11-01", "--until", "2026-11-30"),
        "account",
    ),
    "lines since after until": (
        ("statement", "lines", "--since", "2026-11-30", "--until", "2026-11-01"),
        "until",
    ),
    "import unknown mapping": (("statement", "import", "{sample}", "--mapping", "nope"), "mapping"),
    "import mapping not toml": (
        ("statement", "import", "{sample}", "--mapping", "/etc/passwd"),
        "mapping",
    ),
    "import empty file": (("statement", "import", "{empty}", "--mapping", "sandbox"), ""),
    "import mt940 garbage": (("statement", "import", "{garbage}", "--format", "mt940"), ""),
    "import camt entity bomb": (("statement", "import", "{bomb}", "--format", "camt053"), ""),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_hostile_statement_commands_exit_2(
    case: str, database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Each hostile command line is refused with exit 2 and one line naming the problem,
    never a traceback."""
    sample_ledger(engine)
    assert (
        run_cli(
            database_url, "statement", "import", str(SAMPLE), "--mapping", "sandbox", "--json"
        ).exit_code
        == 0
    )
    files = {
        "sample": SAMPLE,
        "empty": tmp_path / "empty.csv",
        "garbage": tmp_path / "g.sta",
        "bomb": tmp_path / "bomb.xml",
    }
    files["empty"].write_bytes(b"")
    files["garbage"].write_bytes(b":20:X\n:61:garbage\x00\n-}")
    files["bomb"].write_bytes(BOMB)
    args, word = CLI_CASES[case]
    result = run_cli(database_url, *(a.format(**files) for a in args))
    assert result.exit_code == 2, (case, result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), case
    assert "Traceback" not in result.output and word in result.stderr.lower(), result.stderr
