"""`check_note`: what an acknowledgement note may hold."""

from __future__ import annotations

import pytest

from ledger.errors import NoteError
from ledger.findings import MAX_NOTE_CHARS, check_note


def test_a_note_is_trimmed_and_keeps_its_line_breaks() -> None:
    """Blanks around go, tabs and line breaks inside stay."""
    assert check_note("  refund\tclaimed\nfrom provider \n") == "refund\tclaimed\nfrom provider"


@pytest.mark.parametrize(
    "note", ["", "   ", "x" * (MAX_NOTE_CHARS + 1), "a\x00b", "half \ud800 pair", "bad\udcff"]
)
def test_an_empty_long_or_unstorable_note_is_refused(note: str) -> None:
    """Empty, over the limit, a NUL or an unpaired surrogate: NoteError, nothing to store."""
    with pytest.raises(NoteError):
        check_note(note)
