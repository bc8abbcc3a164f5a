"""The JSON report: the summary dict, kobo integers, stable key order."""

from __future__ import annotations

import json
from typing import Any, TextIO


def dumps(summary: dict[str, Any]) -> str:
    """The summary as pretty JSON text (UTF-8 kept readable, so `₦` in hints stays legible)."""
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


def write_json(summary: dict[str, Any], out: TextIO) -> None:
    """Write the JSON report to a text stream."""
    out.write(dumps(summary))
