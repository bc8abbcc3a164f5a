"""Alert text made inert per channel format: Markdown escaped, mentions defanged, e-mail as is."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from reconcile.alert_markup import (
    ZERO_WIDTH_SPACE,
    Channel,
    defang_mentions,
    escape_markdown,
    prepare,
)

HOSTILE = (
    "*BOLD* _it_ <b>x</b> <!channel> [c](x) `code` ~~s~~ <https://evil.example|x> "
    "&lt; @channel @here @everyone @all @room <@U024BE7LH> | a | # h"
)
HOSTILE_LINES = f"{HOSTILE}\n> quote\n# heading\n- item\n1. item\n---"


def _shown(html: str) -> str:
    """The text a reader sees in rendered HTML (tags dropped, entities decoded)."""
    import html as html_module

    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_markdown_escaping_renders_as_the_words_written_with_no_markup() -> None:
    """A CommonMark renderer shows escaped text exactly as written and produces only paragraphs."""
    rendered = MarkdownIt("commonmark").render(escape_markdown(HOSTILE_LINES))
    tags = set(re.findall(r"</?([a-z0-9]+)", rendered))
    assert tags == {"p"}
    assert _shown(rendered).strip() == HOSTILE_LINES


def test_mentions_get_a_zero_width_space_and_nothing_else_changes() -> None:
    """Every `@word` is broken by a zero-width space; removing it gives the text back."""
    defanged = defang_mentions(HOSTILE)
    for word in ("channel", "here", "everyone", "all", "room", "U024BE7LH"):
        assert f"@{word}" not in defanged
        assert f"@{ZERO_WIDTH_SPACE}{word}" in defanged
    assert defanged.replace(ZERO_WIDTH_SPACE, "") == HOSTILE


def test_markdown_rendering_text_channels_get_escaped_text() -> None:
    """Mattermost and Discord render Markdown of plain text: both parts are escaped and defanged."""
    for scheme in ("mmost", "discord", "zulip"):
        ready = prepare("t " + HOSTILE, HOSTILE, Channel(frozenset({scheme}), "text"))
        assert ready.declare == "text"
        assert ready.body == escape_markdown(defang_mentions(HOSTILE))
        assert ready.title == escape_markdown(defang_mentions("t " + HOSTILE))


def test_markdown_channels_get_escaped_text_declared_as_markdown() -> None:
    """Rocket.Chat and Teams get our escaping declared as Markdown, so apprise adds none."""
    ready = prepare(HOSTILE, HOSTILE, Channel(frozenset({"rocket", "rockets"}), "markdown"))
    assert ready.declare == "markdown"
    assert ready.title == ready.body == escape_markdown(defang_mentions(HOSTILE))


def test_plain_and_html_channels_keep_the_characters_for_apprise_to_escape() -> None:
    """Slack, ntfy and Telegram get only mentions defanged; apprise escapes their `<`, `>`, `&`."""
    for scheme, delivers in (("slack", "text"), ("ntfy", "text"), ("tgram", "html")):
        ready = prepare(HOSTILE, HOSTILE, Channel(frozenset({scheme}), delivers))  # type: ignore[arg-type]
        assert ready.declare == "text"
        assert ready.title == ready.body == defang_mentions(HOSTILE)


def test_email_and_generic_webhooks_get_the_words_exactly_as_written() -> None:
    """E-mail and JSON/form/XML receivers get the text untouched."""
    for scheme in ("mailtos", "json", "form", "xml"):
        ready = prepare(HOSTILE, HOSTILE_LINES, Channel(frozenset({scheme}), "text"))
        assert (ready.title, ready.body, ready.declare) == (HOSTILE, HOSTILE_LINES, "text")
