"""The period tie-out for people and spreadsheets: text, JSON, CSV, HTML and XLSX from one
`TieOut`, with the reports' naira formatting and spreadsheet conventions (reconcile/reports)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font
from openpyxl.worksheet._write_only import WriteOnlyWorksheet

from reconcile.reports.html import environment
from reconcile.reports.naira import naira, naira_number
from reconcile.reports.xlsx import NAIRA_FORMAT
from statements.tieout import TieOut

FORMATS = ("text", "json", "csv", "html", "xlsx")

# The figures every form shows, in this order: (label, key of TieOut.to_json()).
FIGURES = (
    ("Opening balance", "opening_balance"),
    ("Credits", "credits"),
    ("Debits", "debits"),
    ("Closing balance", "closing_balance"),
    ("Statement movement", "statement_movement"),
    ("Ledger movement", "ledger_movement"),
    ("Residual", "residual"),
)
# Each list of the tie-out: its key, its title, and the columns of its rows.
LISTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "unmatched_lines",
        "Unmatched lines",
        ("id", "date", "direction", "amount", "reference", "narration"),
    ),
    (
        "missing_from_statement",
        "Missing from statement",
        ("kind", "reference", "role", "direction", "amount", "date"),
    ),
    (
        "mismatches",
        "Mismatches",
        ("kind", "reference", "role", "lines", "statement_amount", "ledger_amount", "difference"),
    ),
    (
        "balance_gaps",
        "Balance gaps",
        ("after_line", "line", "expected_balance", "stated_balance", "difference"),
    ),
)
_MONEY = frozenset(
    {"amount", "statement_amount", "ledger_amount", "difference", "expected_balance",
     "stated_balance"}
)  # fmt: skip


def explanation_lines(result: TieOut) -> list[str]:
    """The sentence, then one line per item explaining the residual."""
    lines = [result.summary()]
    lines += [f"  - {item.text} ({naira(item.amount)})" for item in result.explanations()]
    return lines


def render_text(result: TieOut, out: TextIO) -> None:
    """The tie-out as plain text: the figures, the sentence and the explaining items."""
    out.write(
        f"Tie-out of {result.account} from {result.since.isoformat()} "
        f"to {result.until.isoformat()}\n\n"
    )
    data: dict[str, Any] = result.to_json()
    for label, key in FIGURES:
        out.write(f"  {label:<20}{naira(data[key]):>24}\n")
    matched, suggested = data["matched"], data["suggested"]
    out.write(f"  {'Matched lines':<20}{matched['count']:>10}  {naira(matched['amount'])}\n")
    out.write(
        f"  {'Suggested lines':<20}{suggested['count']:>10}  {naira(suggested['amount'])}\n\n"
    )
    out.write("\n".join(explanation_lines(result)) + "\n")


def render_csv(result: TieOut, out: TextIO) -> None:
    """Every list of the tie-out, one CSV row per item, after the figures (amounts in kobo)."""
    writer = csv.writer(out)
    data: dict[str, Any] = result.to_json()
    writer.writerow(["list", "key", "value"])
    for _, key in FIGURES:
        writer.writerow(["figures", key, data[key]])
    writer.writerow(["figures", "tied_out", data["tied_out"]])
    for key, _, columns in LISTS:
        writer.writerow([])
        writer.writerow(["list", *columns])
        for item in data[key]:
            writer.writerow([key, *(_plain(item.get(name)) for name in columns)])


def _plain(value: Any) -> Any:
    return " ".join(map(str, value)) if isinstance(value, list) else value


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Tie-out of {{ data.account }} — {{ data.since }} to {{ data.until }}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em}
td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#a00}.good{color:#070}</style>
</head><body>
<h1>Tie-out of {{ data.account }}, {{ data.since }} to {{ data.until }}</h1>
<p class="{{ 'good' if data.tied_out else 'bad' }}"><strong>{{ summary }}</strong></p>
<table>{% for label, key in figures %}
<tr><th>{{ label }}</th><td class="n">{{ data[key] | naira }}</td></tr>{% endfor %}
<tr><th>Matched lines</th><td class="n">{{ data.matched.count }} ({{ data.matched.amount | naira }})</td></tr>
<tr><th>Suggested lines</th><td class="n">{{ data.suggested.count }} ({{ data.suggested.amount | naira }})</td></tr>
</table>
{% if items %}<h2>What explains the residual</h2><ul>
{% for item in items %}<li>{{ item.text }} ({{ item.amount | naira }})</li>{% endfor %}
</ul>{% endif %}
{% for key, title, columns in lists %}{% if data[key] %}<h2>{{ title }}</h2>
<table><tr>{% for name in columns %}<th>{{ name }}</th>{% endfor %}</tr>
{% for row in data[key] %}<tr>{% for name in columns %}{% if name in money %}
<td class="n">{{ row[name] | naira }}</td>{% else %}<td>{{ row[name] }}</td>{% endif %}
{% endfor %}</tr>{% endfor %}</table>{% endif %}{% endfor %}
</body></html>
"""  # noqa: E501


def render_html(result: TieOut) -> str:
    """One self-contained page: the sentence, the figures, each explaining item and list."""
    template = environment().from_string(_PAGE)
    return template.render(
        data=result.to_json(),
        summary=result.summary(),
        items=result.explanations(),
        figures=FIGURES,
        lists=LISTS,
        money=_MONEY,
    )


def write_xlsx(result: TieOut, path: Path) -> None:
    """A workbook: a Summary sheet with the figures and the explaining items, and a sheet per
    list (money as naira numbers, text cells typed as text)."""
    data: dict[str, Any] = result.to_json()
    workbook = Workbook(write_only=True)
    summary = workbook.create_sheet("Summary")
    summary.append([_bold(summary, f"Tie-out of {result.account}")])
    summary.append(["Period", f"{data['since']} to {data['until']}"])
    summary.append([result.summary()])
    summary.append([])
    for label, key in FIGURES:
        summary.append([_bold(summary, label), _money(summary, data[key])])
    summary.append([])
    for item in result.explanations():
        summary.append([_text(summary, item.text), _money(summary, item.amount)])
    for key, title, columns in LISTS:
        sheet = workbook.create_sheet(title)
        sheet.append([_bold(sheet, name) for name in columns])
        for row in data[key]:
            sheet.append(_cells(sheet, row, columns))
    workbook.save(path)


def _cells(sheet: WriteOnlyWorksheet, row: dict[str, Any], columns: Sequence[str]) -> list[Any]:
    cells: list[Any] = []
    for name in columns:
        value = row.get(name)
        if name in _MONEY and isinstance(value, int):
            cells.append(_money(sheet, value))
        elif isinstance(value, str):
            cells.append(_text(sheet, value))
        else:
            cells.append(_plain(value))
    return cells


def _bold(sheet: WriteOnlyWorksheet, value: str) -> Any:
    cell = WriteOnlyCell(sheet, value=value)
    cell.font = Font(bold=True)
    return cell


def _text(sheet: WriteOnlyWorksheet, value: str) -> Any:
    # A narration from a bank file typed as text: "=HYPERLINK(…)" is never a formula.
    cell = WriteOnlyCell(sheet, value=value)
    cell.data_type = "s"
    return cell


def _money(sheet: WriteOnlyWorksheet, kobo: int) -> Any:
    cell = WriteOnlyCell(sheet, value=naira_number(kobo))
    cell.number_format = NAIRA_FORMAT
    return cell


def render_json(result: TieOut, out: TextIO) -> None:
    """`TieOut.to_json()`, indented."""
    json.dump(result.to_json(), out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_tie_out(result: TieOut, fmt: str, out: TextIO | None, path: Path | None) -> None:
    """Render `result` as `fmt` into `path` (when given) or `out`."""
    if fmt == "xlsx":
        if path is None:
            raise ValueError("--format xlsx needs --output FILE")
        write_xlsx(result, path)
        return
    if path is not None:
        with path.open("w", encoding="utf-8", newline="") as handle:
            _write_text(result, fmt, handle)
        return
    assert out is not None
    _write_text(result, fmt, out)


def _write_text(result: TieOut, fmt: str, out: TextIO) -> None:
    writers: dict[str, Any] = {"text": render_text, "json": render_json, "csv": render_csv}
    if fmt == "html":
        out.write(render_html(result))
        return
    writers[fmt](result, out)
