"""`payrecon serve`: the app (receiver and operators' routes) under uvicorn."""

from __future__ import annotations

import socket

import click
import structlog
import uvicorn

from payrecon import heap
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail

logger = structlog.get_logger(__name__)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`, as uvicorn would bind it; OSError when it cannot be.

    Bound here rather than by uvicorn, which logs the failure among its start-up lines and
    exits 3 (the code `--fail-on-findings` owns).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        raise OSError(str(exc)) from None
    return sock


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--limit-concurrency",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Connections and requests at once before new requests get 503 "
    "[default: PAYRECON_LIMIT_CONCURRENCY, 500].",
)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, limit_concurrency: int | None) -> None:
    """Run the receiver: webhook, admin API, reports page, health and metrics."""
    from payrecon.app import create_app
    from payrecon.clients import make_client
    from payrecon.headertimeout import header_timeout_protocol
    from receiver.app import sender_policy
    from receiver.fastpath import is_webhook
    from telemetry.asgi import TracedRequests
    from telemetry.tracing import configure_tracing, shutdown_tracing

    app_ctx = app_context(ctx)
    settings = app_ctx.settings()
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc}", EXIT_USAGE)
    # One client for the server's life (the app closes it): one pool, one enquiry cache.
    client = make_client(settings) if settings.provider_ready() else None
    app = create_app(settings, engine=app_ctx.engine(), payout_client=client)
    if not sender_policy(settings).checks_sender:
        logger.warning(
            "no webhook sender check configured: anyone who can reach /webhook can deliver "
            "events (deliveries are still accepted); set PAYRECON_WEBHOOK_TOKEN and/or "
            "PAYRECON_WEBHOOK_ALLOWED_IPS"
        )
    # Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; off, the app is served unwrapped. On, the
    # webhook gets no span per request: its group commit's batch span is the one recorded.
    traced = configure_tracing("payrecon-serve")
    config = uvicorn.Config(
        TracedRequests(app, untraced=is_webhook) if traced else app,
        host=host,
        port=port,
        # Our own X-Forwarded-For handling trusts only PAYRECON_TRUSTED_PROXIES;
        # uvicorn's default of trusting 127.0.0.1 is switched off.
        proxy_headers=False,
        forwarded_allow_ips="",
        access_log=False,
        log_config=None,  # keep the structlog configuration
        server_header=False,
        timeout_graceful_shutdown=10,
        # uvicorn times out only idle keep-alive connections: unfinished headers are closed
        # after PAYRECON_HEADER_TIMEOUT by this protocol, and webhook bodies get 408 after
        # PAYRECON_BODY_TIMEOUT. The cap bounds what a flood of senders can pin meanwhile
        # (past it, new requests get 503 at once).
        http=header_timeout_protocol(settings.header_timeout),
        limit_concurrency=limit_concurrency or settings.limit_concurrency,
    )
    server = uvicorn.Server(config)
    # uvicorn logs its "running on" line only for sockets it binds itself.
    shown = f"[{host}]" if ":" in host else host
    logger.info("receiver listening", url=f"http://{shown}:{port}")
    heap.settle()  # start-up's objects out of the collector's walks, for the server's life
    try:
        server.run(sockets=[sock])
    except SystemExit:
        # uvicorn exits 3 when the application's start-up fails; it has logged why.
        fail("the receiver did not start (see the log line above)", EXIT_RUNTIME)
    finally:
        sock.close()
        shutdown_tracing()
