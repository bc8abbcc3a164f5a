"""Statements: parsers for the wallet's and the bank's exports, line matching, period tie-out
(docs/rules.md "Statements and period tie-out")."""
