"""The webhook receiver: sender checks, parsing, durable idempotent ingest, health and metrics."""
