"""Reconciliation: confirm transfers against the provider, raise findings, alert, report."""
