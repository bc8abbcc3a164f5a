"""The docs agree with the code: operations.md's contents with its headings, README's command
table with each command's options."""

from __future__ import annotations

import re
from pathlib import Path

import click

from payrecon.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_operations_contents_list_every_section_with_its_anchor() -> None:
    """Each numbered section is listed once, in order, under its title, linking to its heading."""
    text = (ROOT / "docs" / "operations.md").read_text()
    headings = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.M)
    listed = re.findall(r"^(\d+)\. \[(.+?)\]\(#([^)]+)\)$", text, flags=re.M)
    assert headings and [n for n, _ in headings] == [str(i) for i in range(1, len(headings) + 1)]
    assert [(n, title) for n, title, _ in listed] == headings
    for number, title, anchor in listed:
        assert anchor == _slug(f"{number}. {title}")


def _command_rows() -> list[tuple[str, list[str]]]:
    """(row, the code spans of its first cell) for each row of README's command table."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## Commands", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `payrecon")]
    assert len(rows) > 15
    return [(row, re.findall(r"`([^`]+)`", row.split(" | ")[0])) for row in rows]


def _resolve(words: list[str], group: list[str]) -> tuple[click.Command, list[str]]:
    """The click command a span names (relative to the row's group when it starts with a
    subcommand) and its path."""
    command: click.Command = cli
    path: list[str] = []
    if words and cli.get_command(click.Context(cli), words[0]) is None:
        words = [*group, *words]
    for word in words:
        found = (
            command.get_command(click.Context(command), word)
            if isinstance(command, click.Group)
            else None
        )
        if found is None:
            break
        command = found
        path.append(word)
    return command, path


def _long_options(command: click.Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}


def test_readme_command_rows_match_each_commands_options() -> None:
    """Every command in README's table exists, shows only options it has, and all of them
    (unless the row ends its options with `…` and points at `--help`)."""
    for row, spans in _command_rows():
        group: list[str] = []
        command: click.Command = cli
        for span in spans:
            if span.startswith("--"):  # an option named in the description: the last command's
                assert span.split()[0] in _long_options(command), row
                continue
            words = span.removeprefix("payrecon ").split()
            command, path = _resolve(words, group)
            assert path, f"{span!r} names no payrecon command ({row})"
            group = path[:1]
            shown = set(re.findall(r"--[a-z][\w-]*", span))
            assert shown <= _long_options(command), (span, shown - _long_options(command))
            if "…" not in span and not isinstance(command, click.Group):
                hidden = _long_options(command) - shown - {"--help"}
                described = set(re.findall(r"`(--[a-z][\w-]*)", row))
                assert hidden <= described, (span, hidden - described)
