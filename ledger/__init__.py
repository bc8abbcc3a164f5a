"""The ledger: tables, engine and sessions, migrations and queries."""
