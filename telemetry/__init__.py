"""Metrics read from the ledger at scrape time, the workers' `/metrics` server and tracing.

It sits above the ledger and below the packages that report through it (receiver, reconcile,
relay) and the composition root that switches it on (docs/operations.md, "Monitoring").
"""
