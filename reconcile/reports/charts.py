"""Inline SVG charts for the HTML report: no script, no network, prints as vectors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

WIDTH = 720
BAR_WIDTH = 540  # two bar charts sit side by side; a narrower box keeps their text legible
HEIGHT = 200
PAD_LEFT = 48  # the least room left of a bar chart's axis; longer tick labels get more
# An upper bound on the width of one 11 px tick character (digits, "," and "₦") in the
# sans-serif fonts browsers pick: the y axis gets room for its widest label, not a guess.
TICK_CHAR_WIDTH = 7.5
PAD_BOTTOM = 28
PAD_TOP = 12


def _label_every(count: int, room: int) -> int:
    # Show at most `room` x-axis labels however many days the period has.
    return max(1, -(-count // room))


def bar_chart(
    labels: Sequence[str],
    values: Sequence[int],
    *,
    title: str,
    fmt: Callable[[int], str],
    css_class: str = "bar",
) -> str:
    """A vertical bar chart, one bar per label, the largest value labelled on the y axis."""
    peak = max(values, default=0)
    ticks = (fmt(peak), fmt(0))
    pad_left = max(PAD_LEFT, round(12 + TICK_CHAR_WIDTH * max(map(len, ticks))))
    plot_w = BAR_WIDTH - pad_left - 8
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    step = plot_w / max(1, len(values))
    bar_w = max(1.0, step * 0.8)
    every = _label_every(len(labels), 6)
    parts = [
        f'<svg class="chart" viewBox="0 0 {BAR_WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<line class="axis" x1="{pad_left}" y1="{PAD_TOP + plot_h}" '
        f'x2="{BAR_WIDTH - 8}" y2="{PAD_TOP + plot_h}"/>',
        f'<text class="tick y-peak" x="{pad_left - 6}" y="{PAD_TOP + 10}" text-anchor="end">'
        f"{escape(ticks[0])}</text>",
        f'<text class="tick" x="{pad_left - 6}" y="{PAD_TOP + plot_h}" text-anchor="end">'
        f"{escape(ticks[1])}</text>",
    ]
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = 0.0 if peak <= 0 else plot_h * value / peak
        x = pad_left + index * step + (step - bar_w) / 2
        y = PAD_TOP + plot_h - height
        parts.append(
            f'<rect class="{css_class}" x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" '
            f'height="{height:.1f}"><title>{escape(label)}: {escape(fmt(value))}</title></rect>'
        )
        if index % every == 0:
            parts.append(
                f'<text class="tick" x="{x + bar_w / 2:.1f}" y="{HEIGHT - 8}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
    if not values:
        parts.append(
            f'<text class="empty" x="{BAR_WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
            "no transfers in this period</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def hbar_chart(items: Sequence[tuple[str, int]], *, title: str) -> str:
    """A horizontal bar chart of counts, one row per item (for findings by kind)."""
    row_h = 24
    height = PAD_TOP + row_h * max(1, len(items)) + 8
    label_w = 170
    plot_w = WIDTH - label_w - 60
    peak = max((value for _, value in items), default=0)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for index, (label, value) in enumerate(items):
        y = PAD_TOP + index * row_h
        width = 0.0 if peak <= 0 else plot_w * value / peak
        parts.append(
            f'<text class="tick" x="{label_w - 8}" y="{y + 15}" text-anchor="end">'
            f"{escape(label)}</text>"
            f'<rect class="{"bar-alert" if value else "bar-zero"}" x="{label_w}" y="{y + 3}" '
            f'width="{max(width, 1.0):.1f}" height="{row_h - 8}"/>'
            f'<text class="value" x="{label_w + width + 6:.1f}" y="{y + 15}">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
