"""`payrecon sandbox` / `python -m sandbox`: run the emulator on a port."""

from __future__ import annotations

import dataclasses
import errno
import math
import os
import socket
from typing import Any

import click
import uvicorn

from sandbox.app import create_app
from sandbox.config import SandboxConfig
from sandbox.errors import ConfigError
from sandbox.faults import parse_faults

SECRET_ENV = "PAYRECON_SANDBOX_SECRET_KEY"
PUBLIC_ENV = "PAYRECON_SANDBOX_PUBLIC_KEY"


def _number(text: str, option: str, *, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{option} must be {kind}, got {text!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{option} must be finite")
    return value


def build_config(options: dict[str, Any]) -> SandboxConfig:
    """Turn the raw option strings into a validated SandboxConfig (ConfigError if unusable)."""
    after_text = options["complete_after"].strip().lower()
    complete_after = None if after_text == "never" else _number(after_text, "--complete-after")
    if complete_after is not None and complete_after < 0:
        raise ConfigError("--complete-after must be seconds >= 0 or 'never'")
    seed = (
        None if options["seed"] is None else int(_number(options["seed"], "--seed", integer=True))
    )
    faults = parse_faults(options["faults"] or "")
    if faults.seed is None and seed is not None:
        faults = dataclasses.replace(faults, seed=seed)
    port = int(_number(options["port"], "--port", integer=True))
    ttl = _number(options["collection_ttl"], "--collection-ttl")
    if not 0 < ttl <= 30 * 86400:
        raise ConfigError("--collection-ttl must be seconds > 0 and at most 30 days")
    wallet = int(_number(options["wallet"], "--wallet", integer=True))
    retry = tuple(
        _number(part, "--webhook-retry") for part in options["webhook_retry"].split(",") if part
    )
    return SandboxConfig(
        environment=options["environment"],
        secret_key=options["secret_key"] or os.environ.get(SECRET_ENV, ""),
        public_key=options["public_key"] or os.environ.get(PUBLIC_ENV, ""),
        otp=options["otp"] or "",
        complete_after=complete_after,
        wallet_balance=wallet,
        webhook_url=options["webhook_url"],
        webhook_retry_delays=retry,
        webhook_secret=options["webhook_secret"],
        webhook_hmac_secret=options["webhook_hmac_secret"],
        webhook_standard_secret=options["webhook_standard_secret"],
        collection_ttl=ttl,
        seed=seed,
        faults=faults,
        trust_forwarded_for=options["trust_forwarded_for"],
        host=options["host"],
        port=port,
    )


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = "already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise ConfigError(f"cannot listen on {host}:{port}: {reason}") from None


@click.command(name="sandbox", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default="8100", show_default=True, help="Port to listen on.")
@click.option("--webhook-url", default=None, help="Where transfer webhooks are sent.")
@click.option("--faults", default=None, metavar="SPEC", help="e.g. seed=7,webhook_drop=0.1")
@click.option("--secret-key", default=None, help=f"Secret key to accept (or ${SECRET_ENV}).")
@click.option("--public-key", default=None, help=f"Public key to accept (or ${PUBLIC_ENV}).")
@click.option("--environment", default="sandbox", show_default=True, help="sandbox|production")
@click.option(
    "--complete-after", default="1", show_default=True, help="Seconds until completion, or never."
)
@click.option(
    "--collection-ttl",
    default="1800",
    show_default=True,
    help="Seconds until an unpaid collection's account expires.",
)
@click.option("--wallet", default="10000000000", show_default=True, help="Balance in kobo.")
@click.option("--otp", default=None, help="Two-factor code for whitelist entries (6 digits).")
@click.option("--seed", default=None, help="Seed for references and faults (reproducible runs).")
@click.option("--trust-forwarded-for", is_flag=True, help="Believe X-Forwarded-For (tests only).")
@click.option(
    "--webhook-retry",
    default="1,2,4,8,16",
    show_default=True,
    help="Seconds between webhook attempts.",
)
@click.option("--webhook-secret", default=None, help="Send X-Webhook-Secret: S.")
@click.option("--webhook-hmac-secret", default=None, help="Send X-Webhook-Signature (HMAC-SHA512).")
@click.option(
    "--webhook-standard-secret", default=None, help="Sign as Standard Webhooks (whsec_…)."
)
@click.pass_context
def command(ctx: click.Context, /, **options: Any) -> None:
    """Run the provider emulator (all ten endpoints, webhooks, faults)."""
    try:
        config = build_config(options)
        _check_port(config.host, config.port)
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(2)
    click.echo(f"secret key: {config.secret_key}")
    click.echo(f"public key: {config.public_key}")
    click.echo(f"otp: {config.otp}")
    shown_host = f"[{config.host}]" if ":" in config.host else config.host
    click.echo(f"listening on http://{shown_host}:{config.port}")
    # proxy_headers off: the whitelist must see the real TCP peer, not a header.
    uvicorn.run(
        create_app(config),
        host=config.host,
        port=config.port,
        log_level="warning",
        proxy_headers=False,
        server_header=False,
    )
