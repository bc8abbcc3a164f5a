"""The reconciler's loop: a failing pass never stops it, and set-up errors log one line."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from reconcile.errors import ProviderMisconfiguredError
from reconcile.scheduler import StopFlag, run_every


def _run_once(error: BaseException) -> tuple[list[dict[str, object]], list[BaseException]]:
    stop = StopFlag()
    seen: list[BaseException] = []

    def job() -> None:
        stop.set()
        raise error

    with capture_logs() as logs:
        run_every(60, job, stop=stop, on_error=seen.append)
    return logs, seen


def test_a_set_up_error_is_logged_as_one_line_without_a_traceback() -> None:
    """A pass stopped by a wrong provider URL logs its message and alerts, with no traceback."""
    error = ProviderMisconfiguredError("PAYRECON_PROVIDER_BASE_URL does not point at the provider")
    logs, seen = _run_once(error)
    [failed] = [line for line in logs if line["event"] == "reconcile_pass_failed"]
    assert failed["error"] == str(error)
    assert "exc_info" not in failed
    assert seen == [error]


@pytest.mark.parametrize("error", [RuntimeError("boom"), ValueError("bad")])
def test_an_unexpected_error_keeps_its_traceback_and_the_loop_alive(error: Exception) -> None:
    """Any other failure is logged with its traceback and handed to the alert hook."""
    logs, seen = _run_once(error)
    [failed] = [line for line in logs if line["event"] == "reconcile_pass_failed"]
    assert failed.get("exc_info") is True
    assert seen == [error]
