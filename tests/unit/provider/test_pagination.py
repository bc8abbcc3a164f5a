"""Listing virtual accounts page by page, and the iterator over all of them."""

from __future__ import annotations

import httpx

from tests.unit.provider.support import VA, Script, ok, sync_client


def _pages(total: int, per_page: int) -> Script:
    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        start = (page - 1) * per_page
        items = [{**VA, "uid": f"va_{n}"} for n in range(start, min(total, start + per_page))]
        return ok(items, meta={"page": page, "per_page": per_page, "total": total})

    return Script(answer)


def test_iterator_yields_every_account_across_pages() -> None:
    """Seven accounts at three per page are three requests and seven items, in order."""
    script = _pages(7, 3)
    client, _ = sync_client(script)
    uids = [account.uid for account in client.iter_virtual_accounts(per_page=3)]
    assert uids == [f"va_{n}" for n in range(7)]
    assert [r.url.params["page"] for r in script.requests] == ["1", "2", "3"]


def test_iterator_passes_filters_on_every_page() -> None:
    """type and status go with every page request."""
    script = _pages(4, 2)
    client, _ = sync_client(script)
    list(client.iter_virtual_accounts(type="dynamic", status="active", per_page=2))
    for request in script.requests:
        assert request.url.params["type"] == "dynamic"
        assert request.url.params["status"] == "active"


def test_iterator_stops_on_an_empty_page_even_if_total_lies() -> None:
    """A total larger than what exists cannot make the iterator loop forever."""

    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        items = [{**VA, "uid": "va_1"}] if page == 1 else []
        return ok(items, meta={"page": page, "per_page": 1, "total": 1000})

    script = Script(answer)
    client, _ = sync_client(script)
    assert len(list(client.iter_virtual_accounts(per_page=1))) == 1
    assert len(script.requests) == 2


def test_iterator_sends_nothing_until_iterated() -> None:
    """Pages are fetched lazily."""
    script = _pages(1, 1)
    client, _ = sync_client(script)
    accounts = client.iter_virtual_accounts()
    assert script.requests == []
    assert [a.uid for a in accounts] == ["va_0"]
