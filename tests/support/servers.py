"""Real uvicorn servers on free loopback ports for integration tests (the product's helper)."""

from __future__ import annotations

from payrecon.servers import free_port, running_server, wait_for_port

__all__ = ["free_port", "running_server", "wait_for_port"]
