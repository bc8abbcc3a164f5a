"""Account name enquiry (endpoint 9): the answer, and the per-account rate limit."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from sandbox.accounts import Behaviour, find_account
from sandbox.banks import bank_by_code
from sandbox.errors import RateLimitedError, RefusalError

ENQUIRY_FAILED = "Account name enquiry failed"
WINDOW_SECONDS = 10.0


def enquire(bank_code: str, account_number: str) -> dict[str, str]:
    """The account's name at that bank, or the spec's enquiry failure (wrong bank included)."""
    bank = bank_by_code(bank_code)
    account = find_account(bank_code, account_number)
    if bank is None or account is None or account.behaviour is Behaviour.ENQUIRY_FAILS:
        raise RefusalError(ENQUIRY_FAILED)
    return {
        "bank_name": bank.name,
        "account_name": account.account_name,
        "account_number": account.account_number,
    }


class EnquiryLimiter:
    """At most `limit` enquiries per (bank, account) in any 10 seconds; 0 means no limit."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, str], deque[float]] = {}

    def admit(self, bank_code: str, account_number: str, limit: int) -> None:
        """Count one enquiry, or raise 429 with the seconds until one is allowed again."""
        if limit <= 0:
            return
        now = self._clock()
        with self._lock:
            window = self._windows.setdefault((bank_code, account_number), deque())
            while window and window[0] <= now - WINDOW_SECONDS:
                window.popleft()
            if len(window) >= limit:
                retry_after = max(1, int(window[0] + WINDOW_SECONDS - now + 0.999))
                raise RateLimitedError(retry_after)
            window.append(now)
