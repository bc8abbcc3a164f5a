"""Parsing a JSON request body that may have been built to hurt the parser.

Deep nesting (`[[[[…]]]]` thousands deep) makes `json.loads` raise RecursionError, or worse
makes every later walk of the value (our own checks, `json.dumps` of an answer) recurse
without bound: it is refused before parsing. Half a surrogate pair is no character and no
database column can hold it. Both are 400, never a 500 (docs/rules.md: Robustness rules). NaN and
Infinity parse as floats, which every number field refuses as 422 naming the field.
"""

from __future__ import annotations

import json
import re
from typing import Any

from web.errors import MalformedBodyError

# No body any route takes nests deeper than a few levels.
MAX_DEPTH = 32
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def nesting_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in `raw` (brackets inside strings ignored)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return raw.count(b"[") + raw.count(b"{")  # an upper bound, and small: done
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', raw)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json(raw: bytes) -> Any:
    """The value `raw` holds; MalformedBodyError when it is not JSON, nests deeper than
    MAX_DEPTH, or escapes half a surrogate pair."""
    if nesting_depth(raw) > MAX_DEPTH:
        raise MalformedBodyError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        # ValueError covers UnicodeDecodeError and integers of more than 4,300 digits.
        raise MalformedBodyError("body is not JSON") from None
    try:
        # JSON may escape half a surrogate pair ("\ud800"), which is no character at all: no
        # database column stores it and no answer could echo it back.
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise MalformedBodyError("body has an unpaired surrogate escape") from None
    return value
