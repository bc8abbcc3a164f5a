"""Durations as people read them: `5 s`, `30 min`, `1 h 30 min` (never `0 min` for 5 s)."""

from __future__ import annotations


def describe_duration(seconds: float) -> str:
    """Whole seconds below a minute, minutes (and seconds) below an hour, else hours and minutes."""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total} s"
    if total < 3600:
        minutes, rest = divmod(total, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(total, 3600)
    minutes = rest // 60
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
