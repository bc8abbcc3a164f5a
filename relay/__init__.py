"""Verified events to the merchant's own systems: outbox, endpoints, delivery worker."""
