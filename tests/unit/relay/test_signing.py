"""Standard Webhooks headers: what the `standardwebhooks` library verifies."""

from __future__ import annotations

import base64
import datetime as dt
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
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


@given(
    body=st.text(max_size=2000),
    event_id=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40),
    timestamp=st.integers(min_value=0, max_value=2**34),
    key=st.binary(min_size=16, max_size=64),
)
def test_our_signature_is_the_librarys_for_any_body_id_and_time(
    body: str, event_id: str, timestamp: int, key: bytes
) -> None:
    """The formula computed with hmac.digest gives exactly what `Webhook(secret).sign` gives."""
    secret = "whsec_" + base64.b64encode(key).decode()
    when = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
    assert signature([secret], event_id, timestamp, body) == Webhook(secret).sign(
        event_id, when, body
    )
