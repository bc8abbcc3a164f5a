"""The one reader of answers without figures, and attribution of a found answer."""

from __future__ import annotations

from ledger.types import FindingKind, TransferStatus
from reconcile.answers import (
    Found,
    NotFound,
    Transient,
    Uninterpretable,
    answered_for_another,
    read_without_figures,
)


def test_a_not_found_counts_and_opens_unknown_to_provider_at_the_limit() -> None:
    """Below the limit a not-found only counts and settles unverifiable; at it, it opens
    unknown_to_provider naming the count, and is not a provider error."""
    below = read_without_figures(NotFound(), not_found_count=1, not_found_limit=3, delay=30.0)
    at = read_without_figures(NotFound(), not_found_count=2, not_found_limit=3, delay=30.0)
    assert (below.not_found, below.open, below.provider_error) == (2, {}, False)
    assert below.resolved == frozenset({FindingKind.UNVERIFIABLE})
    assert at.not_found == 3
    assert at.open == {
        FindingKind.UNKNOWN_TO_PROVIDER: "the provider answered 'not found' 3 times in a row"
    }


def test_an_uninterpretable_answer_opens_unverifiable_and_keeps_the_count() -> None:
    """Garbage opens unverifiable with its detail, is a provider error, leaves the count."""
    said = read_without_figures(
        Uninterpretable("odd"), not_found_count=2, not_found_limit=3, delay=30.0
    )
    assert said.open == {FindingKind.UNVERIFIABLE: "odd"}
    assert (said.not_found, said.provider_error, said.resolved) == (2, True, frozenset())


def test_a_longer_retry_after_wins_over_the_backoff_and_a_shorter_one_does_not() -> None:
    """A 429's Retry-After delays the next check only when longer than the backoff."""
    longer = read_without_figures(
        Transient("429", retry_after=90.0), not_found_count=0, not_found_limit=3, delay=30.0
    )
    shorter = read_without_figures(
        Transient("429", retry_after=5.0), not_found_count=0, not_found_limit=3, delay=30.0
    )
    assert (longer.next_check_in, shorter.next_check_in) == (90.0, 30.0)
    assert longer.open == {} and longer.provider_error


def test_an_answer_for_another_merchant_reference_is_not_ours() -> None:
    """Another merchant reference is someone else's unless the provider reference is ours."""

    def found(merchant: str | None, reference: str = "P-9") -> Found:
        return Found(reference, merchant, 100, 10, TransferStatus.SUCCESSFUL)

    assert not answered_for_another("T-1", "P-1", found(None))
    assert not answered_for_another("T-1", "P-1", found("T-1"))
    assert answered_for_another("T-1", "P-1", found("T-2"))
    assert not answered_for_another("T-1", "P-1", found("T-2", reference="P-1"))
