"""Wire types: what the provider answers, typed where the spec (or PRODUCT.md) names a field.

Every model keeps unknown fields (`extra="allow"`), so a field the provider adds
later is carried through rather than lost. Money fields are strict ints (kobo):
a float, string or bool amount is an answer we cannot interpret, never coerced.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

Kobo = Annotated[StrictInt, Field(ge=0)]
T = TypeVar("T")


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

    name: StrictStr
    code: StrictStr


class AccountEnquiry(WireModel):
    """The account holder's name as the bank reports it (endpoint 9)."""

    bank_name: StrictStr
    account_name: StrictStr
    account_number: StrictStr


class TransferInitiation(WireModel):
    """The provider's answer to a transfer initiation (endpoint 8)."""

    reference: StrictStr  # the provider's own reference
    merchant_reference: StrictStr
    amount: Kobo
    status: TransferStatus
    fee: Kobo


class Transaction(WireModel):
    """A transaction lookup (endpoints 6 and 7); fields fixed by PRODUCT.md."""

    reference: StrictStr
    merchant_reference: StrictStr | None = None
    type: StrictStr | None = None
    amount: Kobo
    fee: Kobo | None = None
    status: TransferStatus
    failure_reason: StrictStr | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None


class Collection(WireModel):
    """A bank-transfer collection: the account the customer pays into (endpoint 5)."""

    reference: StrictStr
    account_number: StrictStr
    account_name: StrictStr | None = None
    bank_name: StrictStr | None = None
    amount: Kobo
    fee: Kobo | None = None
    expires_at: datetime | None = None


class Customer(WireModel):
    """The customer of a virtual account; the spec marks no sub-field required."""

    reference: StrictStr | None = None
    first_name: StrictStr | None = None
    last_name: StrictStr | None = None
    email: StrictStr | None = None
    phone: StrictStr | None = None
    bvn: StrictStr | None = None


class VirtualAccount(WireModel):
    """A merchant-issued virtual account (endpoints 1-4; the record's shape is not shown)."""

    uid: StrictStr
    type: VirtualAccountType | None = None
    status: VirtualAccountStatus
    account_number: StrictStr | None = None
    account_name: StrictStr | None = None
    bank_name: StrictStr | None = None
    customer: Customer | None = None
    expected_amount: Kobo | None = None
    meta: dict[str, Any] | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list and where it sits (PRODUCT.md: `meta {page, per_page, total}`)."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def is_last(self) -> bool:
        """True when no later page can hold anything."""
        return not self.items or self.page * self.per_page >= self.total
