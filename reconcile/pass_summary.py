"""What one reconcile pass did: the counters `reconcile once --json` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


class LookupCounts(Protocol):
    """The lookup counters every book has (`PassSummary`'s top level are the transfers')."""

    checked: int
    confirmed: int
    pending: int
    not_found: int
    transient_errors: int
    foreign_answers: int


@dataclass
class CollectionSummary:
    """The pass's collections: looked up, newly confirmed, still pending (docs/rules.md keys)."""

    checked: int = 0
    confirmed: int = 0
    pending: int = 0
    not_found: int = 0
    transient_errors: int = 0
    foreign_answers: int = 0


@dataclass
class PassSummary:
    """What one pass did; `reconcile once --json` prints `as_dict()`. The top-level lookup
    counters are the transfers'; findings, alerts and provider errors count both kinds."""

    checked: int = 0
    confirmed: int = 0
    pending: int = 0
    findings_raised: int = 0
    findings_resolved: int = 0
    provider_errors: int = 0
    not_found: int = 0
    transient_errors: int = 0
    foreign_answers: int = 0  # answers not in the provider's format (a wrong base URL)
    # Confirmed successes looked up again, and reversals found (docs/rules.md: Reversals).
    reverified: int = 0
    reversed: int = 0
    alerts_sent: int = 0
    alerts_failed: int = 0
    raised_by_kind: dict[str, int] = field(default_factory=dict)
    collections: CollectionSummary = field(default_factory=CollectionSummary)
    # Statement lines decided again (reconcile.statements.passes); empty without statements.
    statements: dict[str, int] = field(default_factory=dict)
    # "provider_key_refused" or "provider_misconfigured" when the pass stopped early
    stopped: str | None = None

    @property
    def provider_unreachable(self) -> bool:
        """True when every lookup of the pass failed transiently (exit 1)."""
        looked_up = self.checked + self.collections.checked
        failed = (
            self.transient_errors
            + self.foreign_answers
            + self.collections.transient_errors
            + self.collections.foreign_answers
        )
        return looked_up > 0 and failed == looked_up

    def count_raised(self, kind: str) -> None:
        """One more finding raised, of `kind`."""
        self.findings_raised += 1
        self.raised_by_kind[kind] = self.raised_by_kind.get(kind, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The JSON summary."""
        return asdict(self)
