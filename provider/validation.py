"""Checks made before anything is sent; each failure is a ProviderRequestError.

Refusing here is cheaper and clearer than a provider refusal, and for a transfer
it is safer: a request we never sent cannot have moved money.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from provider.errors import ProviderRequestError

# docs/rules.md, Numbers. ledger.money holds the same bound for the rest of payrecon; the client
# keeps its own because it depends on nothing of payrecon's (it is usable on its own).
MAX_KOBO = 2**63 - 1
MAX_PER_PAGE = 100
_ACCOUNT_NUMBER = re.compile(r"[0-9]{10}")
_BANK_CODE = re.compile(r"[0-9A-Za-z]{1,16}")
E = TypeVar("E", bound=enum.StrEnum)


def account_number(value: object) -> str:
    """An account number: exactly 10 ASCII digits, as a string (spec, Limits 2)."""
    if not isinstance(value, str) or not _ACCOUNT_NUMBER.fullmatch(value):
        raise ProviderRequestError("account number must be exactly 10 digits")
    return value


def bank_code(value: object) -> str:
    """A bank code as endpoint 10 lists it: short, letters and digits only."""
    if not isinstance(value, str) or not _BANK_CODE.fullmatch(value):
        raise ProviderRequestError("bank code must be 1-16 letters or digits")
    return value


def kobo(value: object, *, name: str = "amount", minimum: int = 1) -> int:
    """An amount in kobo: a real int (never bool, float or str) within range."""
    if type(value) is not int:
        raise ProviderRequestError(f"{name} must be an integer number of kobo")
    if not minimum <= value <= MAX_KOBO:
        raise ProviderRequestError(f"{name} must be between {minimum} and {MAX_KOBO} kobo")
    return value


def reference(value: object, *, name: str = "reference") -> str:
    """A non-empty reference without surrounding blanks or control characters."""
    if not isinstance(value, str) or not value.strip():
        raise ProviderRequestError(f"{name} must be a non-empty string")
    if value != value.strip() or not value.isprintable():
        raise ProviderRequestError(f"{name} must not have blanks around it or control characters")
    return value


def path_segment(value: object, *, name: str = "reference") -> str:
    """A reference or uid made safe to put in a URL path."""
    text = reference(value, name=name)
    if text in {".", ".."}:  # would be resolved away as a dot-segment
        raise ProviderRequestError(f"{name} must not be '.' or '..'")
    return quote(text, safe="")


def currency(value: object) -> str:
    """Only NGN is accepted (spec, Limits 1)."""
    if value != "NGN":
        raise ProviderRequestError("currency must be NGN (collections are NGN only)")
    return "NGN"


def choice(value: object, kind: type[E], *, name: str) -> E:
    """A value of an enumeration (spec gives the allowed values)."""
    if isinstance(value, str):
        for member in kind:
            if member.value == value:
                return member
    allowed = ", ".join(member.value for member in kind)
    raise ProviderRequestError(f"{name} must be one of {allowed}")


def page(value: object, *, name: str = "page", maximum: int | None = None) -> int:
    """A page number or size: a positive int, at most `maximum`."""
    if type(value) is not int or value < 1 or (maximum is not None and value > maximum):
        bound = f" and at most {maximum}" if maximum is not None else ""
        raise ProviderRequestError(f"{name} must be a positive integer{bound}")
    return value


def optional_text(value: object, *, name: str) -> str | None:
    """An optional free-text field."""
    if value is not None and not isinstance(value, str):
        raise ProviderRequestError(f"{name} must be a string")
    return value


def mapping(value: object, *, name: str) -> dict[str, Any] | None:
    """An optional free-form JSON object (`meta`, `customer`)."""
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ProviderRequestError(f"{name} must be an object with string keys")
    return dict(value)
