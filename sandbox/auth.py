"""Bearer-key authentication of /v1 requests (spec, Authentication)."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from sandbox.config import SandboxConfig
from sandbox.errors import AuthenticationError

PREFIX = "Bearer "


def authenticate(request: Request, config: SandboxConfig, *, public_allowed: bool) -> None:
    """Raise 401 unless the request carries this environment's key for this endpoint.

    The public key opens only the client-side endpoints (banks, account
    enquiry); on the others it is answered exactly like an unknown key.
    The other environment's keys and expired keys are refused like unknown ones.
    """
    header = request.headers.get("authorization")
    if header is None or not header.startswith(PREFIX):
        raise AuthenticationError()
    presented = header[len(PREFIX) :].strip().encode()
    allowed = [config.secret_key] + ([config.public_key] if public_allowed else [])
    # Compare against every key (no early exit) so timing says nothing about which matched.
    matched = False
    for key in allowed:
        matched |= hmac.compare_digest(presented, key.encode())
    if not matched:
        raise AuthenticationError()
