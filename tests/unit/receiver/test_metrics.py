"""The receiver's metrics: cached labelled children count like `.labels()` does."""

from __future__ import annotations

from receiver.metrics import create_metrics


def test_cached_children_count_under_the_same_names_and_labels() -> None:
    """delivered() and refused() add to the labelled series, and create no others."""
    metrics = create_metrics()
    metrics.delivered("accepted")
    metrics.delivered("accepted")
    metrics.delivered("invalid")
    metrics.refused("unauthenticated")
    text = metrics.render().decode()
    assert 'payrecon_webhook_deliveries_total{outcome="accepted"} 2.0' in text
    assert 'payrecon_webhook_deliveries_total{outcome="invalid"} 1.0' in text
    assert 'payrecon_webhook_auth_failures_total{reason="unauthenticated"} 1.0' in text
    assert 'outcome="duplicate"' not in text


def test_two_apps_do_not_share_children() -> None:
    """Each receiver's metrics count only its own deliveries."""
    first, second = create_metrics(), create_metrics()
    first.delivered("accepted")
    assert 'outcome="accepted"' not in second.render().decode()
