"""A long-running command's heap: what start-up built is kept out of the collector's walks.

`serve`, `relay run` and `reconcile run` import and build about 180,000 objects before their
first request, pass or delivery, and those live as long as the process. CPython's full
collection walks every object it tracks: about 0.1 s each time on this project's machines,
a pause of the event loop, and for a relay draining a backlog about 13 µs a delivery on
average (bench/RESULTS.md section 21). `settle` collects once and freezes what survived
(`gc.freeze`): later collections walk only what was made after it.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect start-up's garbage, then move every surviving object out of the collector's
    generations (they are never freed: call it once, when start-up is over)."""
    gc.collect()
    gc.freeze()
