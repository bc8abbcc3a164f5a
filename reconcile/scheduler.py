"""`reconcile run`: one pass every poll interval on a `schedule.Scheduler()` instance.

A failing pass is logged and alerted and the loop goes on (schedule would stop on
an exception, so every job is wrapped). SIGTERM/SIGINT let the current pass finish,
then the loop exits.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

import schedule
import structlog

from reconcile.errors import ProviderKeyRefusedError, ProviderMisconfiguredError

logger = structlog.get_logger(__name__)


class StopFlag:
    """Set by SIGTERM/SIGINT; the loop and its waits watch it."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        """Ask the loop to stop after the current pass."""
        self._event.set()

    def is_set(self) -> bool:
        """True once a stop was asked for."""
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early on a stop; True when stopping."""
        return self._event.wait(max(0.0, seconds))

    def install(self) -> None:
        """Route SIGTERM and SIGINT to this flag (main thread only)."""

        def handler(signum: int, _frame: FrameType | None) -> None:
            logger.info("stop_requested", signal=signal.Signals(signum).name)
            self.set()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def run_every(
    interval: float,
    job: Callable[[], None],
    *,
    stop: StopFlag,
    on_error: Callable[[BaseException], None],
) -> None:
    """Run `job` now and then every `interval` seconds until `stop` is set."""
    scheduler = schedule.Scheduler()

    def guarded() -> None:
        try:
            job()
        except (ProviderKeyRefusedError, ProviderMisconfiguredError) as exc:
            # A set-up error says all there is in its message; a traceback on every pass
            # would bury it.
            logger.error("reconcile_pass_failed", error=str(exc))
            try:
                on_error(exc)
            except Exception:
                logger.exception("alerting_failure_failed")
        except Exception as exc:  # the loop must outlive any one failing pass
            logger.exception("reconcile_pass_failed")
            try:
                on_error(exc)
            except Exception:
                logger.exception("alerting_failure_failed")

    # schedule wants whole seconds; sub-second intervals (tests) round up to one.
    scheduler.every(max(1, round(interval))).seconds.do(guarded)
    guarded()
    while not stop.is_set():
        idle = scheduler.idle_seconds
        if stop.wait(idle if idle is not None and idle > 0 else 0.0):
            break
        scheduler.run_pending()
    logger.info("reconciler_stopped")
