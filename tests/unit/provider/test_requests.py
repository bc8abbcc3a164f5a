"""What the client sends: paths, bearer key, bodies, query strings, timeouts."""

from __future__ import annotations

import json

import httpx

from provider.client import ProviderClient
from tests.unit.provider.support import (
    BASE,
    ENQUIRY,
    INITIATION,
    SECRET,
    TXN,
    VA,
    Script,
    ok,
    sync_client,
)


def _one(script: Script) -> httpx.Request:
    assert len(script.requests) == 1
    return script.requests[0]


def test_every_request_carries_the_bearer_key_and_explicit_timeouts() -> None:
    """Spec, Authentication 1: `Authorization: Bearer <key>`; timeouts are set, not default."""
    script = Script(ok([{"name": "Access Bank", "code": "044"}]))
    client, _ = sync_client(script, timeout=4.5)
    client.banks()
    request = _one(script)
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    assert request.extensions["timeout"] == {
        "connect": 4.5,
        "read": 4.5,
        "write": 4.5,
        "pool": 4.5,
    }
    assert str(request.url) == f"{BASE}/v1/banks"


def test_enquiry_sends_query_parameters() -> None:
    """Endpoint 9 takes account_number and bank_code in the query."""
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script)
    client.account_enquiry("0000000018", "058")
    request = _one(script)
    assert request.method == "GET"
    assert request.url.path == "/v1/account-enquiry"
    assert dict(request.url.params) == {"account_number": "0000000018", "bank_code": "058"}


def test_transfer_sends_the_four_fields_as_json() -> None:
    """Endpoint 8's body is amount, bank_code, account_number, reference."""
    script = Script(ok(INITIATION))
    client, _ = sync_client(script)
    result = client.initiate_transfer(
        amount=100_000, bank_code="058", account_number="0000000018", reference="m-1"
    )
    request = _one(script)
    assert (request.method, request.url.path) == ("POST", "/v1/transfer/initiate")
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {
        "amount": 100_000,
        "bank_code": "058",
        "account_number": "0000000018",
        "reference": "m-1",
    }
    assert (result.reference, result.merchant_reference, result.fee) == ("TRF_1", "m-1", 2_500)
    assert result.status == "pending"


def test_collection_sends_ngn_and_leaves_out_what_is_not_given() -> None:
    """Endpoint 5: currency defaults to NGN; absent optional fields are not sent as null."""
    data = {
        "reference": "c-1",
        "account_number": "7000000011",
        "account_name": "CHECKOUT",
        "bank_name": "Wema Bank",
        "amount": 5000,
        "fee": 50,
        "expires_at": "2024-01-01T00:30:00Z",
    }
    script = Script(ok(data))
    client, _ = sync_client(script)
    collection = client.create_collection(reference="c-1", amount=5000, customer_email="a@b.c")
    request = _one(script)
    assert request.url.path == "/v1/collection/bank-transfer"
    assert json.loads(request.content) == {
        "currency": "NGN",
        "reference": "c-1",
        "amount": 5000,
        "customer_email": "a@b.c",
    }
    assert collection.expires_at is not None and collection.expires_at.year == 2024


def test_lookup_paths_quote_the_reference() -> None:
    """A reference with a slash cannot escape its path segment."""
    script = Script(ok(TXN))
    client, _ = sync_client(script)
    client.get_transaction("a/b c")
    client.get_collection("x?y")
    assert script.requests[0].url.raw_path == b"/v1/transaction/a%2Fb%20c"
    assert script.requests[1].url.raw_path == b"/v1/collection/x%3Fy"


def test_virtual_account_endpoints_use_uid_paths() -> None:
    """Endpoints 3 and 4 put the uid in the path; deactivate sends no body."""
    script = Script(ok(VA), ok({**VA, "status": "inactive"}))
    client, _ = sync_client(script)
    assert client.get_virtual_account("va_1").status == "active"
    assert client.deactivate_virtual_account("va_1").status == "inactive"
    get, post = script.requests
    assert (get.method, get.url.path) == ("GET", "/v1/virtual-accounts/va_1")
    assert (post.method, post.url.path) == ("POST", "/v1/virtual-accounts/va_1/deactivate")
    assert post.content == b""


def test_create_virtual_account_body() -> None:
    """Endpoint 1's body: type, customer, and expected_amount/meta only when given."""
    script = Script(ok(VA, status=201))
    client, _ = sync_client(script)
    account = client.create_virtual_account(
        type="dynamic", customer={"first_name": "Ada"}, expected_amount=500, meta={"k": 1}
    )
    assert json.loads(_one(script).content) == {
        "type": "dynamic",
        "customer": {"first_name": "Ada"},
        "expected_amount": 500,
        "meta": {"k": 1},
    }
    assert account.uid == "va_1"


def test_list_sends_filters_and_paging() -> None:
    """PRODUCT.md: `?type=&status=&page=&per_page=`; unset filters are left out."""
    script = Script(ok([VA], meta={"page": 2, "per_page": 5, "total": 6}))
    client, _ = sync_client(script)
    page = client.list_virtual_accounts(type="static", page=2, per_page=5)
    assert dict(_one(script).url.params) == {"type": "static", "page": "2", "per_page": "5"}
    assert (page.page, page.per_page, page.total, len(page.items)) == (2, 5, 6, 1)
    assert page.is_last


def test_base_url_path_prefix_is_kept() -> None:
    """A base address with a path (a gateway prefix) keeps it before /v1."""
    script = Script(ok([]))
    client = ProviderClient("https://gw.test/pay/", SECRET, transport=httpx.MockTransport(script))
    client.banks()
    assert str(_one(script).url) == "https://gw.test/pay/v1/banks"
