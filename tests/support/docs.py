"""The code blocks of docs/, found by a marker comment, so tests run them as printed.

A block is marked by an HTML comment on the line before its opening fence, which a reader of
the rendered page does not see:

    <!-- doc-test: NAME -->
    ```sh
    payrecon …
    ```
    ```
    what it printed
    ```

Several blocks may share a NAME (the steps of a walkthrough); they come back in page order.
A fence without a language right after a marked block is that block's printed output.
Blocks inside list items are indented: the fence's indentation is taken off every line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
MARKER = re.compile(r"^[ \t]*<!-- doc-test: (?P<name>[\w.-]+) -->[ \t]*$")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<language>[\w-]*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    """One marked code block and the output block printed after it ("" when none)."""

    language: str
    code: str
    output: str


def _fenced(lines: list[str], start: int) -> tuple[str, str, int] | None:
    """The fenced block opening at `start` (language, text, index after it), else None."""
    opening = FENCE.match(lines[start]) if start < len(lines) else None
    if opening is None:
        return None
    indent = opening.group("indent")
    for end in range(start + 1, len(lines)):
        if lines[end] == f"{indent}```":
            body = [line.removeprefix(indent) for line in lines[start + 1 : end]]
            return opening.group("language"), "\n".join(body) + "\n", end + 1
    raise ValueError(f"unclosed code block at line {start + 1}")


def marked_blocks(page: str | Path, name: str) -> list[Block]:
    """Every block of `page` (a file in docs/, or a path) marked `<!-- doc-test: NAME -->`."""
    path = page if isinstance(page, Path) else DOCS / page
    lines = path.read_text().splitlines()
    blocks = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line)
        if marker is None or marker.group("name") != name:
            continue
        block = _fenced(lines, index + 1)
        if block is None:
            raise ValueError(f"{path.name}:{index + 1}: marker {name!r} is not before a fence")
        language, code, after = block
        output = _fenced(lines, after)
        printed = output[1] if output is not None and output[0] == "" else ""
        blocks.append(Block(language, code, printed))
    if not blocks:
        raise ValueError(f"{path.name}: no block marked {name!r}")
    return blocks


def marked_block(page: str | Path, name: str) -> Block:
    """The one block of `page` marked NAME."""
    [block] = marked_blocks(page, name)
    return block


# --- running a shell block -----------------------------------------------------------------

# What differs between two honest runs: generated keys and references, times, ports, ages.
VOLATILE = [
    (re.compile(r"\b(TRF|pk_test|pk_live)_[0-9A-Za-z]+"), r"\1_…"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?"), "TIME"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"^otp: \d+$"), "otp: N"),
    (re.compile(r"pending for \d+ s"), "pending for N s"),
]


def _steady(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text.rstrip()


def with_ports(code: str, ports: dict[int, int]) -> str:
    """`code` with each printed port (after `:`, `=` or a space) replaced by a free one."""
    for printed, free in ports.items():
        code = re.sub(rf"(?<=[:= ]){printed}\b", str(free), code)
    return code


def run_shell(code: str, *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """Run `code` with bash -e as one script; (exit code, stdout with stderr after it).

    The script runs in its own session: whatever it left running in the background (a failed
    step before its `kill`) is killed with it.
    """
    out = cwd / "doc-block.out"
    with out.open("w") as handle:
        process = subprocess.Popen(
            ["bash", "-e", "-c", code],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = -1
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    return status, out.read_text()


def _is_table_rule_or_header(line: str) -> bool:
    words = line.split()
    return not words or "━" in line or words[0] == "Id" or (line[:1] == " " and len(words) < 3)


_TABLE_ROW = re.compile(r"^\s+\d+\s")
_DATE = re.compile(r"^(\d{4}-\d\d-\d\d|TIME)")


def _detail_words(cells: list[str]) -> list[str]:
    """The words of a findings row after id, kind and reference, up to its opened time."""
    words = []
    for word in cells[3:]:
        if _DATE.match(word):
            break
        words.append(word)
    return words


def _row_found(line: str, lines: list[str]) -> bool:
    """A table row (as a terminal shows it) matches a line with the same id, kind and
    reference whose detail starts with the row's detail words (a wrapped cell goes on below)."""
    cells = line.split()
    wanted = _detail_words(cells)
    return any(
        a.split()[:3] == cells[:3] and _detail_words(a.split())[: len(wanted)] == wanted
        for a in lines
    )


def _same_keys(wanted: object, actual: object) -> bool:
    """True when both are dicts with the same keys, nested dicts included (values aside)."""
    if not isinstance(wanted, dict) or not isinstance(actual, dict):
        return not isinstance(wanted, dict) and not isinstance(actual, dict)
    return wanted.keys() == actual.keys() and all(
        _same_keys(value, actual[key]) for key, value in wanted.items()
    )


def missing_lines(printed: str, actual: str) -> list[str]:
    """The lines of a doc's printed output that the actual output does not show.

    Volatile parts (references, keys, times, ports) are ignored; a line ending in `…` is a
    prefix; a JSON object matches one with exactly its keys (nested objects included, so a
    key the command added or dropped is reported) and the same values; a table row matches on
    its first three cells (id, kind, reference) and the start of its detail (so kobo printed
    where naira is shown is reported); header, rule and wrapped lines of a table are not
    compared.
    """
    lines = [_steady(line) for line in actual.splitlines()]
    objects = [_json_object(line) for line in lines]
    missing = []
    in_table = False
    for raw in printed.splitlines():
        line = _steady(raw)
        in_table = (in_table or "━" in line) and bool(line.strip())
        if _is_table_rule_or_header(line) or (
            in_table and line[:1] == " " and not _TABLE_ROW.match(line)
        ):
            continue
        if line.endswith("…"):
            found = any(a.startswith(line.removesuffix("…").rstrip()) for a in lines)
        elif (wanted := _json_object(line)) is not None:
            found = any(o is not None and o == wanted and _same_keys(wanted, o) for o in objects)
        elif _TABLE_ROW.match(line):
            found = _row_found(line, lines)
        else:
            found = line in lines
        if not found:
            missing.append(raw)
    return missing


def _json_object(line: str) -> dict[str, object] | None:
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
