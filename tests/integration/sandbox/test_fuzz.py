"""No input makes the sandbox answer 5xx (schemathesis, and hypothesis over raw HTTP)."""

from __future__ import annotations

import json

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

FUZZ_SETTINGS = settings(
    max_examples=8,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def test_openapi_document_lists_the_ten_provider_operations(sandbox):
    """/openapi.json describes the ten /v1 operations with a bearer security scheme."""
    with sandbox.control() as control:
        document = control.get("/openapi.json").json()
    operations = [(m, p) for p, item in document["paths"].items() for m in item]
    assert len(operations) == 10
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_schemathesis_finds_no_server_error(sandbox):
    """Positive and negative cases generated from the OpenAPI document never get a 5xx."""
    schema = schemathesis.openapi.from_url(f"{sandbox.url}/openapi.json")
    headers = {"Authorization": f"Bearer {sandbox.config.secret_key}"}
    checked = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @FUZZ_SETTINGS
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case):
                response = case.call(base_url=sandbox.url, headers=headers)
                assert response.status_code < 500, (case.path, case.body, response.text)

            check()
            checked += 1
    assert checked == 20


PATHS = [
    "/v1/transfer/initiate",
    "/v1/virtual-accounts",
    "/v1/virtual-accounts/{x}",
    "/v1/virtual-accounts/{x}/deactivate",
    "/v1/collection/bank-transfer",
    "/v1/collection/{x}",
    "/v1/transaction/{x}",
    "/v1/account-enquiry?account_number={x}&bank_code={x}",
    "/v1/virtual-accounts?page={x}&per_page={x}&type={x}",
    "/_sandbox/wallet",
    "/_sandbox/webhook-url",
    "/_sandbox/whitelist",
    "/_sandbox/whitelist/entries",
    "/_sandbox/whitelist/entries/{x}",
    "/_sandbox/transfers/{x}/complete",
    "/_sandbox/collections/{x}/pay",
    "/_sandbox/faults",
    "/_sandbox/transfers/{x}/reverse",
    "/_sandbox/wallet/fund",
    "/_sandbox/wallet/statement?since={x}&until={x}&format={x}",
    "/_sandbox/bank/statement?since={x}&format={x}",
]
# Any code point, surrogates included, and a few strings a hostile client would try.
TEXT = st.text(st.characters(exclude_categories=()), max_size=20) | st.sampled_from(
    ["\x00", "\ud800", "a\udfffb", "\u202e", "'; DROP TABLE x; --", "%s%n"]
)
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)
FIELD_NAMES = st.sampled_from(
    ["amount", "bank_code", "account_number", "reference", "type", "customer", "currency",
     "balance", "url", "enabled", "ip", "description", "otp", "status", "expected_amount",
     "meta", "seed", "webhook_drop", "failure_reason", "reason", "webhook",
     "statement_drop_line"]
)  # fmt: skip
# Encoded with ASCII escapes, so a lone surrogate reaches the server as "\ud800".
BODIES = st.binary(max_size=64) | st.dictionaries(FIELD_NAMES | TEXT, JSONISH, max_size=5).map(
    lambda d: json.dumps(d).encode()
)
SEGMENTS = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#&%"),
    min_size=1,
    max_size=12,
)


def test_raw_http_never_gets_a_server_error(sandbox):
    """Random methods, paths, keys and bodies (JSON-ish or raw bytes) never get a 5xx."""
    secret, public = sandbox.config.secret_key, sandbox.config.public_key
    authorizations = st.sampled_from(
        [f"Bearer {secret}", f"Bearer {public}", "Bearer sk_test_x", "Basic abc", "Bearer", secret]
    )

    with sandbox.client(key=None) as client:

        @settings(FUZZ_SETTINGS, max_examples=150)
        @given(
            method=st.sampled_from(["GET", "POST", "PATCH", "DELETE", "PUT"]),
            path=st.sampled_from(PATHS),
            segment=SEGMENTS,
            authorization=authorizations,
            body=BODIES,
        )
        def check(method, path, segment, authorization, body):
            response = client.request(
                method,
                path.replace("{x}", segment),
                content=body,
                headers={"Authorization": authorization, "Content-Type": "application/json"},
            )
            assert response.status_code < 500, (method, path, segment, body, response.text)

        check()


def test_a_lone_surrogate_escape_is_a_422_on_every_json_route(sandbox):
    """`"\\ud800"` in a value or a key is refused as the body's fault (it was a 500 where the
    sandbox echoed or stored it)."""
    bodies = [
        {"amount": 100, "bank_code": "044", "account_number": "0440000017", "reference": "\ud800"},
        {"\udfff": 1},
    ]
    with sandbox.client() as client:
        for path in PATHS:
            for body in bodies:
                response = client.post(
                    path.replace("{x}", "X1"),
                    content=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                )
                assert response.status_code < 500, (path, body, response.text)
