"""The PromQL name extraction the dashboard and rule checks rely on."""

from __future__ import annotations

from tests.support.promql import exported_names, expression_names


def test_names_skip_functions_labels_and_strings() -> None:
    """Only metric names remain of an expression with functions, matchers and grouping."""
    expr = (
        'histogram_quantile(0.99, sum by (le) (rate(payrecon_a_bucket{outcome="x_y"}[5m]))) '
        "/ time() - max(payrecon_b)"
    )
    assert expression_names(expr) == {"payrecon_a_bucket", "payrecon_b"}


def test_unknown_words_are_kept() -> None:
    """An identifier that is not PromQL is reported, so a typo cannot pass as a function."""
    assert expression_names("sumx(payrecon_a)") == {"sumx", "payrecon_a"}


def test_exported_names_include_counter_and_histogram_samples() -> None:
    """A scrape's names are its samples' names."""
    text = (
        "# TYPE payrecon_c counter\npayrecon_c_total 1.0\n"
        '# TYPE payrecon_h histogram\npayrecon_h_bucket{le="+Inf"} 1.0\n'
        "payrecon_h_sum 1.0\npayrecon_h_count 1.0\n"
    )
    assert exported_names(text) == {
        "payrecon_c_total",
        "payrecon_h_bucket",
        "payrecon_h_sum",
        "payrecon_h_count",
    }
