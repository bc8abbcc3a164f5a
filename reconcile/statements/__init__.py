"""The statements shell: imports a statement into the ledger, matches its lines with the pure
matcher of `statements/`, works lines by hand and ties a period out (docs/rules.md "Statements
and period tie-out"; docs/statements.md)."""
