"""`payrecon serve`: the receiver under uvicorn."""

from __future__ import annotations

import click
import uvicorn

from payrecon.context import app_context


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.pass_context
def serve(ctx: click.Context, host: str, port: int) -> None:
    """Run the receiver: webhook, admin API, reports page, health and metrics."""
    from payrecon.clients import make_client
    from receiver.app import create_app

    app_ctx = app_context(ctx)
    settings = app_ctx.settings()
    factory = (lambda: make_client(settings)) if settings.provider_ready() else None
    app = create_app(settings, engine=app_ctx.engine(), payout_client_factory=factory)
    uvicorn.run(
        app,
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
    )
