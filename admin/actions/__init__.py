"""Operator actions, each written once: validate, change, emit events, audit (one family a module).

The console, the JSON API and the CLI are thin callers: they turn their input into arguments,
pass an `Actor`, and answer the typed errors of `admin.errors` their own way
(docs/architecture.md: An operator action).
"""
