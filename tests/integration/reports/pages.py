"""A tiny Starlette app mounting the report handlers as the receiver does, minus the identity
check: every request is the finance operator `fiona` (as `admin.identity` would settle it)."""

from __future__ import annotations

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from admin.answers import EXCEPTION_HANDLERS
from admin.identity import Handler, Operator, Role, Surface, wants_html
from admin.reports_page import acknowledge, reports_page, summary_api


def _as_finance(handler: Handler) -> Handler:
    async def settled(request: Request) -> Response:
        request.state.operator = Operator("fiona", Role.FINANCE)
        request.state.csrf_token = "csrf-of-the-test"
        request.state.surface = Surface.REPORT if wants_html(request) else Surface.API
        return await handler(request)

    return settled


def report_app(engine: Engine) -> Starlette:
    """The three report routes over `engine`."""
    app = Starlette(
        routes=[
            Route("/api/reports/summary", _as_finance(summary_api), methods=["GET"]),
            Route("/reports", _as_finance(reports_page), methods=["GET"]),
            Route("/reports/findings/{id:int}/ack", _as_finance(acknowledge), methods=["POST"]),
        ],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
    )
    app.state.engine = engine
    return app
