"""IP whitelisting of transfer initiation (spec, Authentication → IP whitelisting)."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable

from sandbox.errors import ConflictError, ForbiddenError, NotFoundError, ValidationError
from sandbox.models import WhitelistEntry

NOT_ALLOWED = "Access denied. Your IP address is not allowed."
EMPTY_LIST = "Access denied. IP whitelisting is enabled but no IP addresses are configured."
MIN_DESCRIPTION = 3
MAX_DESCRIPTION = 200


def normalize_ip(text: str) -> str:
    """The canonical text of exactly one IPv4 or IPv6 address; no CIDR, no wildcard."""
    if text != text.strip() or "/" in text or "*" in text:
        raise ValidationError({"ip": "must be exactly one IPv4 or IPv6 address"})
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise ValidationError({"ip": "must be exactly one IPv4 or IPv6 address"}) from None


def check_description(description: str) -> str:
    """A description of at least three characters (spec); surrounding blanks do not count."""
    if len(description.strip()) < MIN_DESCRIPTION:
        raise ValidationError({"description": "must have at least 3 characters"})
    if len(description) > MAX_DESCRIPTION:
        raise ValidationError({"description": f"must have at most {MAX_DESCRIPTION} characters"})
    return description


class Whitelist:
    """The switch and the entries; every change takes effect at once."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._enabled = False
        self._entries: dict[str, WhitelistEntry] = {}
        self._next_id = 1

    @property
    def enabled(self) -> bool:
        """Whether transfer initiation is checked."""
        return self._enabled

    def set_enabled(self, enabled: bool) -> None:
        """Switch the check on or off."""
        self._enabled = enabled

    def entries(self) -> list[WhitelistEntry]:
        """The entries in the order they were added."""
        with self._lock:
            return list(self._entries.values())

    def add(self, ip: str, description: str) -> WhitelistEntry:
        """Add one address (validated, exact); a repeated address is a conflict."""
        address = normalize_ip(ip)
        check_description(description)
        with self._lock:
            if any(entry.ip == address for entry in self._entries.values()):
                raise ConflictError("IP address is already whitelisted")
            entry = WhitelistEntry(f"wl_{self._next_id}", address, description, self._clock())
            self._next_id += 1
            self._entries[entry.id] = entry
            return entry

    def describe(self, entry_id: str, description: str) -> WhitelistEntry:
        """Replace an entry's description (the address cannot be edited)."""
        check_description(description)
        with self._lock:
            entry = self._get(entry_id)
            updated = WhitelistEntry(entry.id, entry.ip, description, entry.created_at)
            self._entries[entry_id] = updated
            return updated

    def remove(self, entry_id: str) -> WhitelistEntry:
        """Delete an entry; the next transfer request is already checked without it."""
        with self._lock:
            entry = self._get(entry_id)
            del self._entries[entry_id]
            return entry

    def check(self, origin: str | None) -> None:
        """Raise the spec's 403 unless the origin address may initiate transfers."""
        if not self._enabled:
            return
        with self._lock:
            allowed = {entry.ip for entry in self._entries.values()}
        if not allowed:
            raise ForbiddenError(EMPTY_LIST, message_only=True)
        try:
            address = str(ipaddress.ip_address(origin or ""))
        except ValueError:
            raise ForbiddenError(NOT_ALLOWED, message_only=True) from None
        if address not in allowed:
            raise ForbiddenError(NOT_ALLOWED, message_only=True)

    def _get(self, entry_id: str) -> WhitelistEntry:
        entry = self._entries.get(entry_id)
        if entry is None:
            raise NotFoundError("Whitelist entry not found")
        return entry
