"""Statements: parsers for the wallet's and the bank's exports, line matching, period tie-out
(PRODUCT.md "Statements and period tie-out")."""
