"""Errors of the sandbox; every refusal the emulator answers is one of these.

SandboxError
 ├── ConfigError            bad option, key or fault spec
 │                          (CLI: exit 2 with one line; control route: 422)
 └── ApiError               carries the whole HTTP answer (status, body, headers)
      ├── ValidationError       422 {"status": "failed", "message": "Validation failed",
      │                              "errors": {field: reason}}
      ├── AuthenticationError   401 {"status": "failed", "message": "Unauthenticated"}
      ├── ForbiddenError        403 (whitelist refusals carry `message` only, spec)
      ├── RefusalError          400 {"status": "failed", "message": CAUSE}
      ├── BadQueryError         400 {"status": "failed", "message": "Invalid query",
      │                              "errors": {parameter: reason}}
      ├── NotFoundError         404 {"status": "failed", "message": ...}
      ├── ConflictError         409 {"status": "failed", "message": ...}
      ├── RateLimitedError      429 + Retry-After
      └── UnavailableError      503 {"status": "failed", "message": "Service unavailable"}
"""

from __future__ import annotations

from typing import Any


class SandboxError(Exception):
    """Root of every error the sandbox raises on purpose."""


class ConfigError(SandboxError):
    """A configuration value (CLI option, fault spec, key) is unusable."""

    def __init__(self, message: str, *, field: str = "config") -> None:
        super().__init__(message)
        self.field = field


class ApiError(SandboxError):
    """An error that is answered over HTTP exactly as described by its fields."""

    def __init__(
        self, status_code: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(body.get("message", ""))
        self.status_code = status_code
        self.body = body
        self.headers = headers or {}


def _failed(message: str) -> dict[str, Any]:
    return {"status": "failed", "message": message}


class ValidationError(ApiError):
    """The request is malformed: 422 with a reason per field."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(422, {**_failed("Validation failed"), "errors": dict(errors)})
        self.errors = dict(errors)


class AuthenticationError(ApiError):
    """The Authorization header is missing, malformed, unknown or not allowed here."""

    def __init__(self) -> None:
        super().__init__(401, _failed("Unauthenticated"))


class ForbiddenError(ApiError):
    """Refused for the caller's address or a wrong two-factor code."""

    def __init__(self, message: str, *, message_only: bool = False) -> None:
        super().__init__(403, {"message": message} if message_only else _failed(message))


class RefusalError(ApiError):
    """A business refusal (transfer cause, failed enquiry): 400."""

    def __init__(self, message: str) -> None:
        super().__init__(400, _failed(message))


class BadQueryError(ApiError):
    """A query parameter (a statement's dates or format) is unusable: 400."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(400, {**_failed("Invalid query"), "errors": dict(errors)})
        self.errors = dict(errors)


class NotFoundError(ApiError):
    """The referenced thing does not exist: 404."""

    def __init__(self, message: str) -> None:
        super().__init__(404, _failed(message))


class ConflictError(ApiError):
    """The thing exists but is in the wrong state for this move: 409."""

    def __init__(self, message: str) -> None:
        super().__init__(409, _failed(message))


class RateLimitedError(ApiError):
    """Too many requests; retry after the given number of seconds: 429."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            429, _failed("Too many requests"), headers={"Retry-After": str(retry_after)}
        )


class UnavailableError(ApiError):
    """The (emulated) upstream is unavailable: 503."""

    def __init__(self) -> None:
        super().__init__(503, _failed("Service unavailable"))
