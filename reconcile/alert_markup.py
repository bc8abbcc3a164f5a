"""Alert text made inert for the channel it goes to (docs/rules.md "Alerts are plain text"), pure.

Alert titles and bodies quote webhook content (references, reasons), so a reference such as
`*BOLD* <!channel> [c](x)` must reach every channel as those characters, never as markup.
What a channel receives depends on the format apprise delivers to it:

* **HTML** (Telegram, HTML e-mail services…): apprise escapes `<`, `>` and `&` itself.
* **Markdown** (Rocket.Chat, Teams workflows, Google Chat, Webex…): every Markdown-significant
  character is backslash-escaped here and apprise is told the text is already Markdown, so
  it is not escaped twice (apprise's own escaping leaves `<` alone, which keeps
  `<https://…>` autolinks live).
* **Text**: apprise delivers it as written. That is right for the channels in
  `SHOWS_TEXT_AS_WRITTEN` (e-mail, generic JSON/form/XML webhooks, Slack with `mrkdwn` off and
  `<`, `>`, `&` escaped by apprise, ntfy, Matrix `m.text`, SMS…), but Mattermost, Discord,
  Zulip and others render Markdown whatever they are sent: any other text channel gets the
  Markdown escaping too (an unknown channel shows a stray backslash rather than live markup).

Chat services also notify a whole room for `@channel`, `@here`, `@everyone`, `@all` or
`@room`: a zero-width space after every `@` that starts a word keeps it readable but inert.
E-mail and the generic webhooks (machines) get the text exactly as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Format = Literal["text", "markdown", "html"]

# apprise URL schemes whose services show text as written (no Markdown/HTML rendering of a
# text message). Anything else that is delivered as text is Markdown-escaped.
SHOWS_TEXT_AS_WRITTEN = frozenset(
    {
        "mailto", "mailtos", "json", "jsons", "form", "forms", "xml", "xmls",
        "slack", "ntfy", "ntfys", "gotify", "gotifys", "pover", "matrix", "matrixs",
        "syslog", "rsyslog", "signal", "signals", "xmpp", "xmpps", "irc", "ircs",
        "mqtt", "mqtts", "sns", "twilio", "vonage", "nexmo", "atalk", "sinch", "plivo",
        "clicksend", "msgbird", "bulksms",
    }
)  # fmt: skip
# Channels read by machines or mail clients: no mention defanging, the words exactly as written.
VERBATIM = frozenset({"mailto", "mailtos", "json", "jsons", "form", "forms", "xml", "xmls"})

ZERO_WIDTH_SPACE = "\u200b"
# Every ASCII punctuation character CommonMark (and Mattermost's, Discord's, Rocket.Chat's
# Markdown) gives a meaning to; `&` only where it would start an entity such as `&lt;`.
_MARKDOWN_SIGNIFICANT = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~=:]|&(?=#?[0-9A-Za-z]{1,32};))")
_MENTION = re.compile(r"@(?=\w)")


@dataclass(frozen=True)
class Channel:
    """How one alert channel treats what apprise sends it."""

    schemes: frozenset[str]  # the apprise URL schemes of its plugin
    delivers: Format  # the format apprise delivers to it when told the alert is text


@dataclass(frozen=True)
class Prepared:
    """The title and body to hand to apprise for one channel, and the format to declare."""

    title: str
    body: str
    declare: Format


def escape_markdown(text: str) -> str:
    """`text` with every Markdown-significant character backslash-escaped (renders as written)."""
    return _MARKDOWN_SIGNIFICANT.sub(r"\\\1", text)


def defang_mentions(text: str) -> str:
    """`text` with a zero-width space after each `@` starting a word (`@channel` pings no one)."""
    return _MENTION.sub("@" + ZERO_WIDTH_SPACE, text)


def prepare(title: str, body: str, channel: Channel) -> Prepared:
    """What to hand apprise so `channel` shows `title` and `body` as plain text."""
    if not channel.schemes & VERBATIM:
        title, body = defang_mentions(title), defang_mentions(body)
    if channel.delivers == "markdown" or (
        channel.delivers == "text" and not channel.schemes & SHOWS_TEXT_AS_WRITTEN
    ):
        return Prepared(escape_markdown(title), escape_markdown(body), channel.delivers)
    # HTML: apprise escapes the body and a folded title; a separate title is a plain field
    # (an e-mail subject). Text shown as written: nothing to escape.
    return Prepared(title, body, "text")
