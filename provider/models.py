"""Wire types: what the provider answers, typed where the spec (or docs/rules.md) names a field.

Every model keeps unknown fields (`extra="allow"`), so a field the provider adds
later is carried through rather than lost. Money fields are strict ints (kobo):
a float, string or bool amount is an answer we cannot interpret, never coerced.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from provider.validation import MAX_KOBO

# Whole kobo from 0 to 2^63-1, what a BIGINT column holds: a larger figure is uninterpretable.
Kobo = Annotated[StrictInt, Field(ge=0, le=MAX_KOBO)]
T = TypeVar("T")


def _is_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udfff"


def _identifier(value: str) -> str:
    # A reference, code or number is matched against the ledger: one that could not be stored
    # (a control character, an unpaired surrogate: neither is printable) makes the answer
    # uninterpretable.
    if not value.isprintable():
        raise ValueError("must hold printable characters only")
    return value


def storable_text(value: str) -> str:
    """Descriptive text of an answer, kept whatever it holds but made storable: NUL (which
    PostgreSQL's text refuses) dropped, an unpaired surrogate (which no encoding takes) shown
    as U+FFFD. The rule of `ledger.types.storable_text`, restated: the client library depends
    on nothing else of payrecon's."""
    if value.isascii() and "\x00" not in value:
        return value
    return "".join("\ufffd" if _is_surrogate(char) else char for char in value if char != "\x00")


# Strings of an answer: identifiers are refused when unstorable, free text is cleaned.
Identifier = Annotated[StrictStr, AfterValidator(_identifier)]
Text = Annotated[StrictStr, AfterValidator(storable_text)]


class TransferStatus(enum.StrEnum):
    """Transfer (and transaction) status (spec, States and transitions)."""

    PENDING = "pending"
    SUCCESSFUL = "successful"
    FAILED = "failed"


class VirtualAccountType(enum.StrEnum):
    """Kinds of virtual account (spec, Virtual account)."""

    STATIC = "static"
    DYNAMIC = "dynamic"


class VirtualAccountStatus(enum.StrEnum):
    """Virtual account status (spec, Virtual account status)."""

    ACTIVE = "active"
    INACTIVE = "inactive"


class WireModel(BaseModel):
    """Base of every provider answer: unknown fields kept, instances immutable."""

    model_config = ConfigDict(extra="allow", frozen=True)


class Bank(WireModel):
    """A bank the provider can pay to (endpoint 10)."""

    name: Text
    code: Identifier


class AccountEnquiry(WireModel):
    """The account holder's name as the bank reports it (endpoint 9)."""

    bank_name: Text
    account_name: Text
    account_number: Identifier


class TransferInitiation(WireModel):
    """The provider's answer to a transfer initiation (endpoint 8)."""

    reference: Identifier  # the provider's own reference
    merchant_reference: Identifier
    amount: Kobo
    status: TransferStatus
    fee: Kobo


class Transaction(WireModel):
    """A transaction lookup (endpoints 6 and 7); fields fixed by docs/rules.md."""

    reference: Identifier
    merchant_reference: Identifier | None = None
    type: Text | None = None
    amount: Kobo
    fee: Kobo | None = None
    status: TransferStatus
    failure_reason: Text | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None


class Collection(WireModel):
    """A bank-transfer collection: the account the customer pays into (endpoint 5)."""

    reference: Identifier
    account_number: Identifier
    account_name: Text | None = None
    bank_name: Text | None = None
    amount: Kobo
    fee: Kobo | None = None
    expires_at: datetime | None = None


class Customer(WireModel):
    """The customer of a virtual account; the spec marks no sub-field required."""

    reference: Identifier | None = None
    first_name: Text | None = None
    last_name: Text | None = None
    email: Text | None = None
    phone: Text | None = None
    bvn: Text | None = None


class VirtualAccount(WireModel):
    """A merchant-issued virtual account (endpoints 1-4; the record's shape is not shown)."""

    uid: Identifier
    type: VirtualAccountType | None = None
    status: VirtualAccountStatus
    account_number: Identifier | None = None
    account_name: Text | None = None
    bank_name: Text | None = None
    customer: Customer | None = None
    expected_amount: Kobo | None = None
    meta: dict[str, Any] | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list and where it sits (docs/rules.md: `meta {page, per_page, total}`)."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def is_last(self) -> bool:
        """True when no later page can hold anything."""
        return not self.items or self.page * self.per_page >= self.total
