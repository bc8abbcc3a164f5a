"""A typed httpx client for the provider's API: all ten endpoints, sync and async.

Import what you need from the modules (`provider.client`, `provider.models`,
`provider.errors`); this package builds nothing at import time but the NullHandler
below.
"""

from __future__ import annotations

import logging

# A library prints nothing unless the application configures logging (the stdlib's advice
# for libraries): without this, warnings would reach stderr through logging.lastResort.
logging.getLogger(__name__).addHandler(logging.NullHandler())
