"""The webhook receiver: Starlette app, webhook ingest, admin API, health and metrics."""
