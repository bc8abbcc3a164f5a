"""The helper that finds the docs' marked code blocks and compares their printed output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.docs import DOCS, MARKER, marked_blocks, missing_lines, with_ports

PAGE = """# A page

<!-- doc-test: steps -->
```sh
echo one
```
```
one
```

1. In a list:

   <!-- doc-test: steps -->
   ```sh
   echo two
   ```

<!-- doc-test: lonely -->
Not a fence.
"""


def test_marked_blocks_come_in_page_order_with_their_output(tmp_path: Path) -> None:
    """Blocks sharing a name come back in order, dedented, each with the output after it."""
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    first, second = marked_blocks(page, "steps")
    assert (first.language, first.code, first.output) == ("sh", "echo one\n", "one\n")
    assert (second.code, second.output) == ("echo two\n", "")
    with pytest.raises(ValueError, match="not before a fence"):
        marked_blocks(page, "lonely")
    with pytest.raises(ValueError, match="no block"):
        marked_blocks(page, "absent")


def test_every_marker_in_the_docs_is_before_a_fence() -> None:
    """A marker separated from its block would silently drop commands from the tests."""
    names = {
        (page, match.group("name"))
        for page in DOCS.glob("*.md")
        for line in page.read_text().splitlines()
        if (match := MARKER.match(line))
    }
    assert {name for _, name in names} >= {"sandbox-keys", "sandbox-walkthrough"}
    for page, name in names:
        assert marked_blocks(page, name)


def test_a_changed_figure_is_missing_and_volatile_parts_are_not() -> None:
    """References, times and ports may differ; a status, an amount or a JSON value may not."""
    printed = (
        "WALK-1: sent — ₦15,000.00, provider reference TRF_AAAA1111, status pending\n"
        '{"checked": 3, "confirmed": 2}\n'
        "listening on http://127.0.0.1:36727\n"
        '{"faults":{"seed":null …\n'
        "   1   fee_mismatch   WALK-3   fees differ   2026-11-22T05:59:13.900995Z   open\n"
    )
    same = (
        "WALK-1: sent — ₦15,000.00, provider reference TRF_BBBB2222, status pending\n"
        '{"confirmed": 2, "checked": 3}\n'
        "listening on http://127.0.0.1:41001\n"
        '{"faults":{"seed":null,"webhook_drop":0.0}}\n'
        "   1   fee_mismatch   WALK-3   fees differ   2026-11-23T10:00:00.000001Z   open\n"
    )
    assert missing_lines(printed, same) == []
    changed = same.replace("₦15,000.00", "₦150.00").replace('"checked": 3', '"checked": 4')
    changed = changed.replace("fee_mismatch", "amount_mismatch")
    assert len(missing_lines(printed, changed)) == 3


def test_only_the_printed_ports_change() -> None:
    """A port is replaced after `:`, `=` or a space, never inside a longer number."""
    code = "export A=8100 B=8000\ncurl http://127.0.0.1:8100/x --amount 18000 --port 8000\n"
    replaced = with_ports(code, {8100: 50001, 8000: 50002})
    assert replaced == (
        "export A=50001 B=50002\ncurl http://127.0.0.1:50001/x --amount 18000 --port 50002\n"
    )
    assert not re.search(r"\b8[01]00\b", replaced)


def test_a_key_added_or_dropped_by_the_command_is_missing() -> None:
    """A printed JSON object must show every key the command prints, nested ones included."""
    printed = '{"checked": 3, "collections": {"checked": 0}}\n'
    assert missing_lines(printed, '{"collections": {"checked": 0}, "checked": 3}') == []
    assert missing_lines(printed, '{"checked": 3, "collections": {"checked": 0}, "new": 0}')
    assert missing_lines(printed, '{"checked": 3, "collections": {"checked": 0, "new": 0}}')
    assert missing_lines(printed, '{"checked": 3}')


def test_a_findings_row_is_compared_on_its_detail_and_wrapped_lines_are_skipped() -> None:
    """A row's detail must start the same (naira, not kobo); its wrapped tail is not compared."""
    printed = (
        "  Id   Kind           Reference   Detail                                 Opened (UTC)\n"
        " ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n"
        "   1   fee_mismatch   WALK-3      fees differ: quoted ₦25.00, webhook    2026-11-26 09:49"
        "   open\n"
        "                                  ₦25.50, provider ₦25.00\n"
    )
    naira = "1\tfee_mismatch\tWALK-3\tfees differ: quoted ₦25.00, webhook ₦25.50, provider ₦25.00"
    kobo = "1\tfee_mismatch\tWALK-3\tfees differ: quoted 2500, webhook 2550, provider 2500 kobo"
    assert missing_lines(printed, naira + "\t2026-11-26T09:49:55.2Z\topen") == []
    assert len(missing_lines(printed, kobo + "\t2026-11-26T09:49:55.2Z\topen")) == 1
