"""Metric names in PromQL expressions and in a Prometheus text exposition (for the tests that
hold the dashboard and the alert rules to what payrecon exports)."""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

# PromQL's functions, aggregations and keywords the shipped expressions may use.
PROMQL_WORDS = frozenset(
    {
        "sum", "max", "min", "avg", "count", "by", "without", "rate", "increase", "time",
        "histogram_quantile", "and", "or", "unless", "on", "ignoring", "offset", "abs",
        "clamp_min", "absent", "changes", "delta", "deriv",
    }
)  # fmt: skip
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_MATCHERS = re.compile(r"\{[^}]*\}")
_GROUPING = re.compile(r"\b(by|without|on|ignoring)\s*\([^)]*\)")
_RANGE = re.compile(r"\[[^\]]*\]")
_IDENTIFIER = re.compile(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b")


def expression_names(expr: str) -> set[str]:
    """The identifiers of `expr` that are neither PromQL words, label names nor strings: the
    metric names it reads."""
    text = _STRINGS.sub(" ", expr)
    text = _MATCHERS.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    text = _RANGE.sub(" ", text)
    return {word for word in _IDENTIFIER.findall(text) if word not in PROMQL_WORDS}


def exported_names(exposition: str) -> set[str]:
    """Every sample name (`_total`, `_bucket`, `_sum`, `_count` included) of a scrape."""
    return {
        sample.name
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
    }
