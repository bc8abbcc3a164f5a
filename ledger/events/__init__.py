"""The outbox: event rows written with the ledger change that causes them (docs/rules.md: Relay)."""
