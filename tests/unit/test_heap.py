"""A long-running command's heap after start-up (payrecon.heap)."""

from __future__ import annotations

import gc
import weakref

from payrecon import heap


class _Node:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_settle_frees_start_ups_garbage_and_freezes_what_survives() -> None:
    """A cycle dropped before `settle` is freed by it; one still held is moved out of the
    collector's generations, so later collections do not walk it."""
    dropped = _Node()
    dropped_ref = weakref.ref(dropped)
    del dropped
    kept = _Node()
    try:
        heap.settle()
        assert dropped_ref() is None
        assert gc.get_freeze_count() > 0
        assert not any(obj is kept for obj in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(obj is kept for obj in gc.get_objects())
