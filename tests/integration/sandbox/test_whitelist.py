"""Conformance: IP whitelisting (spec, Authentication → IP whitelisting)."""

from __future__ import annotations

from tests.integration.sandbox.conftest import transfer_body

NOT_ALLOWED = {"message": "Access denied. Your IP address is not allowed."}
EMPTY = {"message": "Access denied. IP whitelisting is enabled but no IP addresses are configured."}


def _add(control, sandbox, ip, description="office server"):
    return control.post(
        "/_sandbox/whitelist/entries",
        json={"ip": ip, "description": description, "otp": sandbox.config.otp},
    )


def test_whitelist_is_off_by_default(sandbox):
    """With no whitelist configuration, transfer initiation is accepted."""
    with sandbox.control() as control:
        state = control.get("/_sandbox/whitelist").json()["data"]
    with sandbox.client() as client:
        response = client.post("/v1/transfer/initiate", json=transfer_body("wl-off"))
    assert state == {"enabled": False, "entries": []}
    assert response.status_code == 200


def test_enabled_empty_whitelist_refuses_with_its_own_message(sandbox):
    """Enabled with no entries: 403 with the 'no IP addresses are configured' message only."""
    balance = sandbox.world.balance
    with sandbox.control() as control:
        control.post("/_sandbox/whitelist", json={"enabled": True})
    with sandbox.client() as client:
        response = client.post("/v1/transfer/initiate", json=transfer_body("wl-empty"))
    assert response.status_code == 403
    assert response.json() == EMPTY
    assert sandbox.world.transfers() == []
    assert sandbox.world.balance == balance


def test_unlisted_address_is_refused_and_nothing_moves(sandbox):
    """An address not on the list gets 403 'not allowed'; no transfer, no funds move."""
    balance = sandbox.world.balance
    with sandbox.control() as control:
        assert _add(control, sandbox, "10.1.2.3").status_code == 201
        control.post("/_sandbox/whitelist", json={"enabled": True})
    with sandbox.client() as client:
        response = client.post("/v1/transfer/initiate", json=transfer_body("wl-no"))
    assert response.status_code == 403
    assert response.json() == NOT_ALLOWED
    assert sandbox.world.transfers() == []
    assert sandbox.world.balance == balance


def test_listed_address_may_initiate_and_delete_takes_effect_at_once(sandbox):
    """127.0.0.1 listed: accepted; after deleting the entry the next request is refused."""
    with sandbox.control() as control:
        entry = _add(control, sandbox, "127.0.0.1").json()
        control.post("/_sandbox/whitelist", json={"enabled": True})
        with sandbox.client() as client:
            allowed = client.post("/v1/transfer/initiate", json=transfer_body("wl-yes"))
            assert control.delete(f"/_sandbox/whitelist/entries/{entry['id']}").status_code == 200
            refused = client.post("/v1/transfer/initiate", json=transfer_body("wl-yes-2"))
    assert allowed.status_code == 200
    assert refused.status_code == 403
    assert refused.json() == EMPTY


def test_whitelist_applies_only_to_transfer_initiation(sandbox):
    """Enabled with an empty list, every other endpoint still answers normally."""
    with sandbox.control() as control:
        control.post("/_sandbox/whitelist", json={"enabled": True})
    with sandbox.client() as client:
        codes = [
            client.get("/v1/banks").status_code,
            client.get(
                "/v1/account-enquiry", params={"account_number": "0440000017", "bank_code": "044"}
            ).status_code,
            client.get("/v1/virtual-accounts").status_code,
            client.post(
                "/v1/collection/bank-transfer",
                json={"currency": "NGN", "reference": "wl-col", "amount": 5000},
            ).status_code,
            client.get("/v1/transaction/wl-col").status_code,
        ]
    assert codes == [200, 200, 200, 200, 200]


def test_forwarded_for_is_ignored_unless_trusted(start_sandbox, receiver):
    """X-Forwarded-For of a listed address does not help unless the sandbox trusts it."""
    plain = start_sandbox(webhook_url=receiver.url)
    trusting = start_sandbox(webhook_url=receiver.url, trust_forwarded_for=True)
    answers = []
    for box in (plain, trusting):
        with box.control() as control:
            _add(control, box, "203.0.113.7")
            control.post("/_sandbox/whitelist", json={"enabled": True})
        with box.client(headers={"X-Forwarded-For": "203.0.113.7"}) as client:
            answers.append(client.post("/v1/transfer/initiate", json=transfer_body("xff")))
    assert answers[0].status_code == 403
    assert answers[1].status_code == 200


def test_entry_rules_single_address_description_and_otp(sandbox):
    """CIDR, wildcard and short descriptions are 422; a wrong otp is 403; IPv6 is accepted."""
    with sandbox.control() as control:
        cidr = _add(control, sandbox, "10.0.0.0/24")
        wildcard = _add(control, sandbox, "10.0.0.*")
        short = _add(control, sandbox, "10.0.0.1", description="ab")
        wrong_otp = control.post(
            "/_sandbox/whitelist/entries",
            json={"ip": "10.0.0.1", "description": "office", "otp": "not-it"},
        )
        ipv6 = _add(control, sandbox, "2001:db8::1")
    assert cidr.status_code == 422
    assert wildcard.status_code == 422
    assert short.status_code == 422
    assert "description" in short.json()["errors"]
    assert wrong_otp.status_code == 403
    assert wrong_otp.json() == {
        "status": "failed",
        "message": "Invalid two-factor authentication code",
    }
    assert ipv6.status_code == 201
    assert ipv6.json()["ip"] == "2001:db8::1"


def test_description_is_editable_but_address_is_not(sandbox):
    """PATCH changes the description; a PATCH carrying `ip` is 422 and changes nothing."""
    with sandbox.control() as control:
        entry = _add(control, sandbox, "192.0.2.5").json()
        path = f"/_sandbox/whitelist/entries/{entry['id']}"
        edited = control.patch(path, json={"description": "new name"})
        moved = control.patch(path, json={"ip": "192.0.2.6", "description": "moved"})
        listing = control.get("/_sandbox/whitelist").json()["data"]["entries"]
    assert edited.status_code == 200
    assert moved.status_code == 422
    assert [(e["ip"], e["description"]) for e in listing] == [("192.0.2.5", "new name")]
