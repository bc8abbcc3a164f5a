"""`payrecon endpoints` as a user runs it: add, list, disable, enable, rotate-secret, remove;
bad input is exit 2 with one line, and an endpoint's secret shows only when it is made."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from ledger.db import create_db_engine, read_session
from ledger.types import utcnow
from payrecon.settings import load_settings
from relay.endpoints import listed, signing_secrets
from tests.support.processes import PAYRECON, payrecon_env, serving

RELAY_KEYS = "relay-key-e2e-0123456789-abcdefghijklmn"
HOOK = "http://127.0.0.1:9000/payrecon"
ADMIN = "admin-token-e2e-0123456789"


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PAYRECON, "endpoints", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_an_endpoint_is_added_listed_switched_rotated_and_removed(database_url: str) -> None:
    """The whole life of an endpoint; the secrets appear once each, on the commands that made
    them, and in no log line; the relay key never appears."""
    env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS)
    added = _run(["add", HOOK, "--events", "transfer.confirmed", "--description", "orders"], env)
    assert added.returncode == 0, added.stderr
    secret = added.stdout.split("secret: ")[1].split()[0]
    assert secret.startswith("whsec_") and "endpoint 1 added" in added.stdout
    as_json = _run(["add", "http://127.0.0.1:9001/other", "--json"], env)
    second = json.loads(as_json.stdout)
    assert second["id"] == 2 and second["secret"].startswith("whsec_")
    listed = _run(["list", "--json"], env)
    items = json.loads(listed.stdout)
    assert [(i["id"], i["url"], i["events"], i["enabled"], i["pending"]) for i in items] == [
        (1, HOOK, ["transfer.confirmed"], True, 0),
        (2, "http://127.0.0.1:9001/other", items[1]["events"], True, 0),
    ]
    # Every type but transfer.reported (transfer.reversed included).
    assert "transfer.reported" not in items[1]["events"] and len(items[1]["events"]) == 6
    disabled = _run(["disable", "1"], env)
    table = _run(["list"], env)
    assert disabled.stdout.strip() == "endpoint 1 disabled"
    assert table.stdout.splitlines()[0].split("\t") == [
        "id",
        "url",
        "events",
        "enabled",
        "pending",
        "last_success",
    ]
    assert table.stdout.splitlines()[1].split("\t")[3:] == [
        "no (disabled by an operator)",
        "0",
        "never",
    ]
    enabled = _run(["enable", "1"], env)
    assert json.loads(_run(["list", "--json"], env).stdout)[0]["enabled"] is True
    rotated = _run(["rotate-secret", "1"], env)
    new_secret = rotated.stdout.split("new secret: ")[1].split()[0]
    assert new_secret.startswith("whsec_") and new_secret != secret
    assert "until" in rotated.stdout
    removed = _run(["remove", "1"], env)
    assert "removed" in removed.stdout
    assert [i["id"] for i in json.loads(_run(["list", "--json"], env).stdout)] == [2]
    runs = [added, as_json, listed, disabled, table, enabled, rotated, removed]
    assert [r.returncode for r in runs] == [0] * len(runs)
    everything = "".join(r.stdout + r.stderr for r in runs)
    assert RELAY_KEYS not in everything
    assert all(s not in r.stderr for r in runs for s in (secret, new_secret, second["secret"]))
    assert everything.count(secret) == 1 and everything.count(new_secret) == 1


def test_bad_input_is_exit_2_with_one_line(database_url: str) -> None:
    """A bad URL, an unknown type, an unknown or impossible id, and a missing
    PAYRECON_RELAY_KEYS each exit 2 with one `payrecon:` line and no traceback."""
    env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS)
    no_keys = payrecon_env(database_url=database_url)
    cases = [
        (["add", "ftp://example.com/"], env, "http:// or https://"),
        (["add", "http://user:pw@example.com/"], env, "credentials"),
        (["add", HOOK, "--events", "transfer.paid"], env, "unknown event type 'transfer.paid'"),
        (["add", HOOK, "--events", ","], env, "names no type"),
        (["add", HOOK], no_keys, "PAYRECON_RELAY_KEYS"),
        (["disable", "42"], env, "no endpoint 42"),
        (["enable", "abc"], env, "no endpoint 'abc'"),
        (["remove", str(2**64)], env, "no endpoint"),
        (["rotate-secret", "7"], no_keys, "PAYRECON_RELAY_KEYS"),
        (["rotate-secret", "7"], env, "no endpoint 7"),
    ]
    results = [_run(args, environment) for args, environment, _ in cases]
    for (args, _, message), result in zip(cases, results, strict=True):
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("payrecon: ") and message in result.stderr, args
        assert len(result.stderr.strip().splitlines()) == 1, args
        assert "Traceback" not in result.stderr
    assert _run(["list"], env).stdout.startswith("no endpoints")


def test_the_served_api_logs_no_endpoint_secret(database_url: str, tmp_path: Path) -> None:
    """Adding an endpoint and rotating its secret over HTTP: the answers carry the secrets, the
    server's log holds none of them nor the relay key."""
    log = tmp_path / "serve.log"
    env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS, admin_token=ADMIN)
    auth = {"authorization": f"Bearer {ADMIN}"}
    with serving(env, log=log) as base:
        added = httpx.post(f"{base}/api/endpoints", json={"url": HOOK}, headers=auth, timeout=10)
        rotated = httpx.post(
            f"{base}/api/endpoints/{added.json()['id']}/rotate-secret", headers=auth, timeout=10
        )
        refused = httpx.post(f"{base}/api/endpoints", json={"url": 1}, headers=auth, timeout=10)
    secrets = [added.json()["secret"], rotated.json()["secret"]]
    text = log.read_text()
    assert (added.status_code, rotated.status_code, refused.status_code) == (201, 200, 422)
    assert "/api/endpoints" in text  # the requests were logged
    assert [s for s in [*secrets, RELAY_KEYS] if s in text] == []


def test_the_relay_key_is_rotated_with_reseal(database_url: str) -> None:
    """New key first, `endpoints reseal`, old key dropped: every secret still opens and signs,
    and a key that never sealed them is refused with exit 2."""

    old_env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS)
    added = json.loads(_run(["add", HOOK, "--json"], old_env).stdout)
    rotated = json.loads(_run(["rotate-secret", str(added["id"]), "--json"], old_env).stdout)
    new_key = "relay-key-e2e-new-0123456789-abcdefghij"
    both = payrecon_env(database_url=database_url, relay_keys=f"{new_key},{RELAY_KEYS}")
    resealed = _run(["reseal"], both)
    assert resealed.returncode == 0, resealed.stderr
    assert "resealed the secrets of 1 endpoint(s)" in resealed.stdout

    box = load_settings(relay_keys=new_key).secret_box()  # the old key is gone
    engine = create_db_engine(database_url)
    try:
        with read_session(engine) as session:
            [endpoint] = listed(session)
            secrets = signing_secrets(endpoint, box, now=utcnow())
    finally:
        engine.dispose()
    assert secrets == [rotated["secret"], added["secret"]]
    stranger = payrecon_env(database_url=database_url, relay_keys="x" * 40)
    refused = _run(["reseal"], stranger)
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("payrecon: no key in PAYRECON_RELAY_KEYS opens")


def test_own_host_endpoints_are_refused_in_every_spelling(database_url: str) -> None:
    """Without PAYRECON_RELAY_ALLOW_NETWORKS, `endpoints add` of any spelling of a loopback,
    unspecified or metadata address exits 2 with one line naming the setting; none is added."""
    env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS, relay_allow_networks="")
    for url in (
        "http://2130706433/x",
        "http://0x7f000001/x",
        "http://127.1/x",
        "http://0/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://localhost:9000/x",
        "http://169.254.169.254/latest/meta-data/",
    ):
        refused = _run(["add", url], env)
        assert refused.returncode == 2, (url, refused.stdout)
        [line] = refused.stderr.splitlines()
        assert line.startswith("payrecon: URL: ") and "PAYRECON_RELAY_ALLOW_NETWORKS" in line
    assert json.loads(_run(["list", "--json"], env).stdout) == []
    private = _run(["add", "http://10.0.0.7:9000/hook"], env)
    assert private.returncode == 0, private.stderr


def test_a_bad_allowed_network_is_exit_2_naming_the_variable(database_url: str) -> None:
    """PAYRECON_RELAY_ALLOW_NETWORKS that is not a list of CIDRs stops the command with exit 2."""
    env = payrecon_env(
        database_url=database_url, relay_keys=RELAY_KEYS, relay_allow_networks="127.0.0.0/99"
    )
    refused = _run(["list"], env)
    assert refused.returncode == 2
    assert refused.stderr.startswith("payrecon: PAYRECON_RELAY_ALLOW_NETWORKS: ")


def test_a_rotation_the_keys_cannot_open_is_refused_and_changes_nothing(
    database_url: str,
) -> None:
    """`rotate-secret` under a key that never sealed the endpoint's secret exits 2 naming
    PAYRECON_RELAY_KEYS; the original key still opens the one secret, which still signs."""
    env = payrecon_env(database_url=database_url, relay_keys=RELAY_KEYS)
    added = json.loads(_run(["add", HOOK, "--json"], env).stdout)
    stranger = payrecon_env(database_url=database_url, relay_keys="x" * 40)
    refused = _run(["rotate-secret", str(added["id"])], stranger)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "PAYRECON_RELAY_KEYS opens its current secret" in refused.stderr
    box = load_settings(relay_keys=RELAY_KEYS).secret_box()
    engine = create_db_engine(database_url)
    try:
        with read_session(engine) as session:
            [endpoint] = listed(session)
            secrets = signing_secrets(endpoint, box, now=utcnow())
            assert endpoint.previous_secret_sealed is None
    finally:
        engine.dispose()
    assert secrets == [added["secret"]]
