"""Standard Webhooks headers: what the `standardwebhooks` library verifies."""

from __future__ import annotations

import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from relay.keys import new_secret
from relay.signing import headers, signature, user_agent

BODY = '{"id":"evt_01J0000000000000000000000","type":"transfer.confirmed","sequence":1,"data":{}}'
EVENT = "evt_01J0000000000000000000000"


def test_the_library_verifies_our_headers() -> None:
    """A consumer's `Webhook(secret).verify` accepts the body with the headers we send."""
    secret = new_secret()
    sent = headers([secret], EVENT, int(time.time()), BODY)
    assert Webhook(secret).verify(BODY, sent)["type"] == "transfer.confirmed"
    assert sent["webhook-id"] == EVENT and sent["content-type"] == "application/json"
    assert sent["user-agent"] == user_agent() and user_agent().startswith("payrecon/")


def test_during_a_rotation_either_secret_verifies() -> None:
    """Two secrets give two space-separated signatures; a consumer with either one verifies."""
    old, new = new_secret(), new_secret()
    sent = headers([new, old], EVENT, int(time.time()), BODY)
    assert len(sent["webhook-signature"].split(" ")) == 2
    assert Webhook(old).verify(BODY, sent) == Webhook(new).verify(BODY, sent)


def test_another_secret_or_a_changed_body_does_not_verify() -> None:
    """A third secret, or one changed byte of the body, fails verification."""
    secret = new_secret()
    sent = headers([secret], EVENT, int(time.time()), BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY, sent)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace('"sequence":1', '"sequence":2'), sent)


def test_the_signature_is_v1_and_depends_on_the_timestamp() -> None:
    """Each signature is `v1,…`; another second gives another signature."""
    secret = new_secret()
    first = signature([secret], EVENT, 1_700_000_000, BODY)
    assert first.startswith("v1,")
    assert first != signature([secret], EVENT, 1_700_000_001, BODY)
