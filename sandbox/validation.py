"""Reading request bodies and fields; every problem becomes a 422 naming the field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sandbox.errors import ValidationError

MAX_BODY_BYTES = 1_000_000
MAX_KOBO = 2**63 - 1
TEN_DIGITS = re.compile(r"[0-9]{10}")


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, or 422 (malformed, too deep, too large, not an object)."""
    if len(raw) > MAX_BODY_BYTES:
        raise ValidationError({"body": f"must be at most {MAX_BODY_BYTES} bytes"})
    try:
        value = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ValidationError({"body": "must be valid JSON"}) from None
    try:
        # An escaped half of a surrogate pair ("\ud800") is no character: nothing could store
        # or echo it.
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise ValidationError({"body": "must not contain unpaired surrogate escapes"}) from None
    if not isinstance(value, dict):
        raise ValidationError({"body": "must be a JSON object"})
    return value


class Fields:
    """Collects field errors so one 422 reports them all."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.errors: dict[str, str] = {}

    def fail(self, name: str, reason: str) -> None:
        """Record a problem with one field (the first one per field wins)."""
        self.errors.setdefault(name, reason)

    def done(self) -> None:
        """Raise the 422 if any field was wrong."""
        if self.errors:
            raise ValidationError(self.errors)

    def present(self, name: str) -> bool:
        """True when the field is there and not null."""
        return self.data.get(name) is not None

    def kobo(self, name: str, *, minimum: int = 1, required: bool = True) -> int | None:
        """An integer amount in kobo (bool and float are not integers)."""
        value = self.data.get(name)
        if value is None:
            if required:
                self.fail(name, "is required")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, "must be an integer (kobo)")
            return None
        if not minimum <= value <= MAX_KOBO:
            self.fail(name, f"must be between {minimum} and {MAX_KOBO}")
            return None
        return value

    def string(
        self,
        name: str,
        *,
        required: bool = True,
        max_length: int = 1000,
        choices: tuple[str, ...] | None = None,
        allow_blank: bool = False,
    ) -> str | None:
        """A string field, optionally one of `choices`."""
        value = self.data.get(name)
        if value is None:
            if required:
                self.fail(name, "is required")
            return None
        if not isinstance(value, str):
            self.fail(name, "must be a string")
            return None
        if choices is not None and value not in choices:
            self.fail(name, f"must be one of: {', '.join(choices)}")
            return None
        if not allow_blank and not value.strip():
            self.fail(name, "must not be empty")
            return None
        if len(value) > max_length:
            self.fail(name, f"must be at most {max_length} characters")
            return None
        return value

    def account_number(self, name: str = "account_number") -> str | None:
        """Exactly ten ASCII digits (spec, Limits)."""
        value = self.string(name)
        if value is not None and not TEN_DIGITS.fullmatch(value):
            self.fail(name, "must be exactly 10 digits")
            return None
        return value

    def boolean(self, name: str) -> bool | None:
        """A required JSON boolean."""
        value = self.data.get(name)
        if not isinstance(value, bool):
            self.fail(name, "must be true or false")
            return None
        return value

    def mapping(self, name: str, *, required: bool = False) -> dict[str, Any] | None:
        """A JSON object field."""
        value = self.data.get(name)
        if value is None:
            if required:
                self.fail(name, "is required")
            return None
        if not isinstance(value, dict):
            self.fail(name, "must be an object")
            return None
        return value

    def strings(self, name: str, keys: tuple[str, ...], *, required: bool) -> dict[str, str]:
        """An object whose known keys are optional strings; other keys are ignored."""
        value = self.mapping(name, required=required)
        result: dict[str, str] = {}
        for key in keys:
            item = (value or {}).get(key)
            if item is None:
                continue
            if not isinstance(item, str) or len(item) > 1000:
                self.fail(f"{name}.{key}", "must be a string of at most 1000 characters")
            else:
                result[key] = item
        return result


def query_int(
    params: Mapping[str, str], name: str, *, default: int, minimum: int, maximum: int
) -> int:
    """A whole-number query parameter within bounds, or 422."""
    text = params.get(name)
    if text is None or text == "":
        return default
    if not re.fullmatch(r"[0-9]{1,9}", text) or not minimum <= int(text) <= maximum:
        raise ValidationError({name: f"must be a whole number from {minimum} to {maximum}"})
    return int(text)


def query_choice(params: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    """An optional query parameter that must be one of `choices`."""
    text = params.get(name)
    if text is None or text == "":
        return None
    if text not in choices:
        raise ValidationError({name: f"must be one of: {', '.join(choices)}"})
    return text
