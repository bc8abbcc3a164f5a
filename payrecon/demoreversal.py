"""The demo's reversal: a success the beneficiary's bank takes back, with no webhook.

docs/rules.md (Reversals): once the reconciler has confirmed the demo's chosen payout successful,
the sandbox reverses it (`POST /_sandbox/transfers/{reference}/reverse`, `"webhook": false`,
as if its webhook had been dropped). Only the re-verification at the demo's short
PAYRECON_REVERIFY_AFTER can find it; the reconcile loop waits until it has.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from sqlalchemy import Engine, select
from sqlmodel import col

from ledger.db import read_session
from ledger.models import Transfer
from ledger.types import TransferStatus

REVERSED = 11  # which payout the beneficiary's bank takes back
REASON = "Transfer reversed by beneficiary bank"


@dataclass
class DemoReversal:
    """The demo's one reversal: which transfer, whether the sandbox has reversed it yet, and
    how the ledger found it (the summary shows it)."""

    reference: str
    done_at_sandbox: bool = False
    found_by: str | None = None

    def step(self, engine: Engine, control: httpx.Client, sandbox_url: str) -> None:
        """After a pass: reverse the transfer at the sandbox once the ledger has confirmed it
        successful; note how the ledger found the reversal once it has."""
        with read_session(engine) as session:
            status, confirmed, source = session.execute(
                select(
                    col(Transfer.status), col(Transfer.confirmed), col(Transfer.reversal_source)
                ).where(col(Transfer.reference) == self.reference)
            ).one()
        if status == TransferStatus.REVERSED.value:
            self.found_by = source
        elif not self.done_at_sandbox and confirmed and status == TransferStatus.SUCCESSFUL.value:
            control.post(
                f"{sandbox_url}/_sandbox/transfers/{self.reference}/reverse",
                json={"reason": REASON, "webhook": False},
            ).raise_for_status()
            self.done_at_sandbox = True

    @property
    def waiting(self) -> bool:
        """True until the ledger has found the reversal."""
        return self.found_by is None
