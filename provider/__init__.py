"""A typed httpx client for the provider's API: all ten endpoints, sync and async.

Import what you need from the modules (`provider.client`, `provider.models`,
`provider.errors`); this package builds nothing at import time.
"""

from __future__ import annotations
