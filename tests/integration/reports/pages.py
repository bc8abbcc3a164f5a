"""A tiny Starlette app mounting the report handlers as the receiver does (minus the token)."""

from __future__ import annotations

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.routing import Route

from admin.reports_page import acknowledge, reports_page, summary_api


def report_app(engine: Engine) -> Starlette:
    """The three report routes over `engine`."""
    app = Starlette(
        routes=[
            Route("/api/reports/summary", summary_api, methods=["GET"]),
            Route("/reports", reports_page, methods=["GET"]),
            Route("/reports/findings/{id:int}/ack", acknowledge, methods=["POST"]),
        ]
    )
    app.state.engine = engine
    return app
