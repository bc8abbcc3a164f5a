"""The statements and periods API on a served app: roles, audit rows, and malformed,
oversized, duplicate, out-of-order and hostile input (both databases)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
from sqlalchemy import Engine

from tests.integration.admin.conftest import Cast, StartCast, audit_rows
from tests.integration.statements.ledger_rows import HEADER, SAMPLE, sample_ledger

BODY = SAMPLE.read_bytes()
ROWS = SAMPLE.read_text(encoding="utf-8").splitlines()[1:]
IMPORT = "/api/statements?mapping=sandbox"


def _as(cast: Cast, role: str) -> httpx.Client:
    return httpx.Client(base_url=cast.url, auth=("x", cast.tokens[role]), timeout=30)


def test_finance_imports_viewers_read_and_each_change_is_audited(
    cast: Cast, engine: Engine
) -> None:
    """A viewer may list imports, lines and the tie-out but not import or work a line;
    finance imports (201, the summary), ignores, matches and closes, each audited once."""
    sample_ledger(engine)
    with _as(cast, "viewer") as viewer, _as(cast, "finance") as finance:
        assert viewer.post(IMPORT, content=BODY).status_code == 403
        made = finance.post(IMPORT, content=BODY)
        assert made.status_code == 201, made.text
        summary = made.json()
        assert (summary["read"], summary["new"], summary["matched"]) == (7, 7, 6)
        assert summary["invalid"] == [] and summary["unmatched"] == 1
        imports = viewer.get("/api/statements").json()
        assert [i["file_name"] for i in imports["items"]] == ["upload"]
        lines = viewer.get("/api/statements/lines", params={"state": "unmatched"}).json()
        assert [line["id"] for line in lines["items"]] == [1]
        assert viewer.post("/api/statements/lines/1/ignore", json={}).status_code == 403
        ignored = finance.post(
            "/api/statements/lines/1/ignore", json={"as": "funding", "note": "top-up"}
        )
        assert ignored.status_code == 200, ignored.text
        assert (ignored.json()["state"], ignored.json()["ignored_as"]) == ("ignored", "funding")
        period = {"account": "provider-wallet", "since": "2026-11-01", "until": "2026-11-30"}
        tie = viewer.get("/api/periods/tie-out", params=period).json()
        assert tie["tied_out"] is True and tie["residual"] == 0
        assert tie["summary"] == "The period ties out to the kobo."
        assert viewer.post("/api/periods/close", json=period).status_code == 403
        closed = finance.post("/api/periods/close", json=period)
        assert closed.status_code == 201 and closed.json()["lock"] >= 1
    rows = audit_rows(engine)
    done = [(r.action, r.operator, r.subject) for r in rows if r.action.startswith(("st", "pe"))]
    assert done == [
        ("statement.import", "fiona", "statement_import:1"),
        ("statement.ignore", "fiona", "statement_line:1"),
        ("period.close", "fiona", "period:provider-wallet:2026-11-01:2026-11-30"),
    ]
    assert json.loads(rows[-3].detail or "{}")["new"] == 7


def test_a_multipart_upload_keeps_its_file_name(cast: Cast, engine: Engine) -> None:
    """The multipart part `file` is the statement; its file name is in the audit row."""
    with _as(cast, "finance") as finance:
        made = finance.post(IMPORT, files={"file": ("nov.csv", BODY, "text/csv")})
        assert made.status_code == 201, made.text
        empty = finance.post(IMPORT, files={"other": ("x.csv", BODY, "text/csv")})
        assert empty.status_code == 400 and "no part named 'file'" in empty.json()["message"]
    (row,) = audit_rows(engine, "statement.import")
    assert json.loads(row.detail or "{}")["file"] == "nov.csv"


def test_malformed_input_is_refused_with_every_invalid_line(cast: Cast, engine: Engine) -> None:
    """A file with bad lines is 422 listing each with its line number, nothing stored; bad
    query values are 400; an empty body 422; a mapping path is never read."""
    bad = HEADER + ROWS[0] + "\n2026-13-40,,R,bad date,1.00,,\n" + ROWS[1] + "\n,,,,x,,\n"
    with _as(cast, "finance") as finance:
        refused = finance.post(IMPORT, content=bad.encode())
        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert [item["line"] for item in body["invalid"]] == [3, 5]
        assert body["invalid_total"] == 2
        assert finance.get("/api/statements/lines").json()["items"] == []
        for query, field in (
            ("?format=pdf", "format"),
            ("?kind=savings", "kind"),
            ("?mapping=/etc/passwd", "mapping"),
            ("?mapping=../x.toml", "mapping"),
        ):
            answer = finance.post("/api/statements" + query, content=BODY)
            assert (answer.status_code, answer.json()["parameter"]) == (400, field), query
        assert finance.post(IMPORT, content=b"").status_code == 422
        assert finance.post("/api/statements", content=BODY).status_code == 422  # no mapping
        for path, payload in (
            ("/api/statements/lines/abc/unmatch", None),
            ("/api/statements/lines/99999999999999999999/unmatch", None),
        ):
            assert finance.post(path, json=payload).status_code == 400
        assert finance.post("/api/statements/lines/1/match", json={"x": 1}).status_code == 422
        assert finance.post("/api/statements/lines/1/match", content=b"{").status_code in (400, 415)
        for bad_period in (
            {"since": "2026-11-01"},
            {"since": "2026-W01-1", "until": "2026-11-30"},
            {"since": "2026-11-30", "until": "2026-11-01"},
            {"since": 5, "until": "2026-11-30"},
        ):
            answer = finance.post("/api/periods/close", json=bad_period)
            assert answer.status_code == 422, bad_period
        nobody = {"account": "nobody", "since": "2026-11-01", "until": "2026-11-30"}
        assert finance.get("/api/periods/tie-out", params=nobody).status_code == 404
        assert finance.get("/api/statements/lines", params={"cursor": "zz"}).status_code == 400
        assert finance.get("/api/statements", params={"cursor": "zz"}).status_code == 400
    assert audit_rows(engine, "statement.import") == []


def test_an_oversized_body_is_refused_while_it_arrives(start_cast: StartCast) -> None:
    """Over PAYRECON_STATEMENT_MAX_BYTES is 413 whether the size is declared or streamed."""

    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b"x" * 1024

    with start_cast(statement_max_bytes=2048) as cast, _as(cast, "finance") as finance:
        declared = finance.post(IMPORT, content=b"x" * 4096)
        assert declared.status_code == 413
        streamed = finance.post(IMPORT, content=chunks())
        assert streamed.status_code == 413
        multipart = finance.post(IMPORT, files={"file": ("big.csv", b"x" * 4096, "text/csv")})
        assert multipart.status_code == 413
        assert finance.post(IMPORT, content=BODY[:2000]).status_code in (201, 422)


def test_duplicate_and_out_of_order_exports_store_each_movement_once(
    cast: Cast, engine: Engine
) -> None:
    """The same file twice stores nothing new; a newest-first export of the same days is
    all already known."""
    sample_ledger(engine)
    newest_first = (HEADER + "\n".join(reversed(ROWS)) + "\n").encode()
    with _as(cast, "finance") as finance:
        assert finance.post(IMPORT, content=BODY).json()["new"] == 7
        again = finance.post(IMPORT, content=BODY).json()
        assert (again["new"], again["already_known"]) == (0, 7)
        flipped = finance.post(IMPORT, content=newest_first).json()
        assert (flipped["new"], flipped["already_known"]) == (0, 7)
        assert len(finance.get("/api/statements/lines").json()["items"]) == 7


def test_hostile_files_are_refused_without_harm(cast: Cast) -> None:
    """An XML entity bomb, binary junk and NUL bytes in a name are clear 4xx answers."""
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>'
        b"<Document>&c;</Document>"
    )
    with _as(cast, "finance") as finance:
        assert finance.post("/api/statements?format=camt053", content=bomb).status_code == 422
        assert finance.post("/api/statements", content=b"\x00\xff" * 500).status_code == 422
        assert finance.post(IMPORT + "&account=a%00b", content=BODY).status_code == 400
        assert finance.post(IMPORT + "&account=" + "a" * 300, content=BODY).status_code == 400


def test_working_lines_by_hand_over_the_api(cast: Cast, engine: Engine) -> None:
    """Match a line to a transfer, refuse a second match (409), unmatch it, confirm a
    suggestion with an empty body."""
    sample_ledger(engine)
    with _as(cast, "finance") as finance:
        finance.post(IMPORT, content=BODY)
        again = finance.post("/api/statements/lines/2/match", json={"transfer": "inv-1001"})
        assert again.status_code == 409 and "already matched" in again.json()["message"]
        assert finance.post("/api/statements/lines/2/unmatch").status_code == 200
        matched = finance.post("/api/statements/lines/2/match", json={"transfer": "inv-1001"})
        assert matched.status_code == 200, matched.text
        assert (matched.json()["state"], matched.json()["transfer"]) == ("matched", "inv-1001")
        assert finance.post("/api/statements/lines/1/match", json={}).status_code == 409
        missing = finance.post("/api/statements/lines/999/unmatch")
        assert missing.status_code == 404
    actions = [r.action for r in audit_rows(engine)]
    assert actions.count("statement.match") == 1 and actions.count("statement.unmatch") == 1
