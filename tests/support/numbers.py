"""Hostile numbers people may type, shared by the tests of every money input."""

from __future__ import annotations

# Text that Python's int() or str.isdigit() would take, or that looks like money, but is not
# a whole number of kobo in ASCII digits.
HOSTILE_TEXT = [
    "١٠٠",  # Arabic-Indic digits: int() reads 100
    "１００",  # fullwidth digits: int() reads 100
    "𝟏𝟎𝟎",  # mathematical bold digits: int() reads 100
    "²",  # superscript two: isdigit() is True, int() raises
    "1_000",  # int() reads 1000
    "10.5",
    "1e2",
    "true",
    "-1",
    "+100",
    "0x64",
    "1 000",
    "100kobo",
    "",
    " ",
    "9223372036854775808",  # 2^63
    "1" * 5000,  # past int()'s 4300-digit limit
]
