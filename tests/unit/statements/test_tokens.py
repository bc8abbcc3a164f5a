"""Reference tokens: what a line's texts can name, bounded and case-blind."""

from __future__ import annotations

from statements.tokens import MAX_TEXT, reference_key, reference_tokens


def test_tokens_start_and_end_at_letters_and_digits_between_separators() -> None:
    """Every stretch from a word's start to a word's end, of a reference's length, upper-cased."""
    assert reference_tokens("TRF/PSP-0042/fee") == {
        "TRF/PSP", "TRF/PSP-0042", "TRF/PSP-0042/FEE", "PSP-0042", "PSP-0042/FEE", "0042",
        "0042/FEE",
    }  # fmt: skip
    assert "PSP-004" not in reference_tokens("PSP-0042")


def test_a_reference_key_is_what_a_token_would_be() -> None:
    """Keys drop the separators around a reference and upper-case it, as tokens are."""
    assert reference_key("(psp-0042).") == "PSP-0042" in reference_tokens("(psp-0042).")


def test_only_the_start_of_a_very_long_text_is_read() -> None:
    """Text beyond MAX_TEXT characters names nothing, so the work per line is bounded."""
    text = "x " * MAX_TEXT + "PSP-0042"
    assert "PSP-0042" not in reference_tokens(text)
