"""Wake an idle worker when an event commits: PostgreSQL `LISTEN payrecon_relay`.

ledger.events.outbox sends `pg_notify` in the transaction that writes deliveries, so the database
delivers it at commit. The listener holds its own autocommit connection and sets an event on
each notification; a lost connection is re-opened after a pause (the worker polls meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib

import psycopg
import structlog
from sqlalchemy import Engine

from ledger.events.outbox import CHANNEL

logger = structlog.get_logger(__name__)

RECONNECT_DELAY = 2.0


def conninfo(engine: Engine) -> str:
    """The libpq URL of the engine's database (psycopg's own connect takes no driver name)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


async def listen(engine: Engine, wake: asyncio.Event, stop: asyncio.Event) -> None:
    """Set `wake` on every notification on CHANNEL until `stop` (or cancellation)."""
    while not stop.is_set():
        try:
            async with await psycopg.AsyncConnection.connect(
                conninfo(engine), autocommit=True, connect_timeout=5
            ) as connection:
                await connection.execute(f"LISTEN {CHANNEL}")
                wake.set()  # anything committed before LISTEN is found by the next claim
                async for _notice in connection.notifies():
                    wake.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("relay_listen_lost", error=type(exc).__name__)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=RECONNECT_DELAY)
