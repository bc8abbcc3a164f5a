"""The operators' routes: the JSON API under `/api` and the reports page, behind the admin token.

Every route is wrapped in `admin_only` here, in one list, so that no route can forget it.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from admin import api, findings_api, relay_api, reports_page
from admin.auth import admin_only
from admin.identity import Role, requires


def admin_routes() -> list[BaseRoute]:
    """The admin routes (the app's state holds `engine`, `settings`, `admin_token` and
    `payout_client`)."""
    return [
        Route("/api/transfers", admin_only(api.list_transfer_page), methods=["GET"]),
        Route("/api/transfers", admin_only(api.post_payout), methods=["POST"]),
        Route("/api/transfers/expected", admin_only(api.post_expected), methods=["POST"]),
        Route("/api/transfers/{reference}", admin_only(api.get_transfer), methods=["GET"]),
        Route(
            "/api/transfers/{reference}/checks",
            requires(Role.VIEWER)(findings_api.transfer_checks),
            methods=["GET"],
        ),
        Route("/api/findings", requires(Role.VIEWER)(findings_api.list_findings), methods=["GET"]),
        Route("/api/findings/ack", requires(Role.FINANCE)(findings_api.ack_many), methods=["POST"]),
        Route(
            "/api/findings/{id}/ack", requires(Role.FINANCE)(findings_api.ack_one), methods=["POST"]
        ),
        Route(
            "/api/findings/{id}/assign",
            requires(Role.FINANCE)(findings_api.assign),
            methods=["POST"],
        ),
        Route(
            "/api/findings/{id}/notes", requires(Role.FINANCE)(findings_api.note), methods=["POST"]
        ),
        Route("/api/endpoints", admin_only(relay_api.list_endpoint_records), methods=["GET"]),
        Route("/api/endpoints", admin_only(relay_api.post_endpoint), methods=["POST"]),
        Route("/api/endpoints/{id}", admin_only(relay_api.get_endpoint), methods=["GET"]),
        Route("/api/endpoints/{id}", admin_only(relay_api.patch_endpoint), methods=["PATCH"]),
        Route("/api/endpoints/{id}", admin_only(relay_api.delete_endpoint), methods=["DELETE"]),
        Route(
            "/api/endpoints/{id}/rotate-secret",
            admin_only(relay_api.rotate_secret),
            methods=["POST"],
        ),
        Route("/api/events", admin_only(relay_api.list_event_page), methods=["GET"]),
        Route("/api/events/{id}", admin_only(relay_api.get_event), methods=["GET"]),
        Route("/api/deliveries/{id}/retry", admin_only(relay_api.retry_delivery), methods=["POST"]),
        Route("/api/reports/summary", admin_only(reports_page.summary_api), methods=["GET"]),
        Route("/reports", admin_only(reports_page.reports_page), methods=["GET"]),
        Route(
            "/reports/findings/{id:int}/ack",
            admin_only(reports_page.acknowledge),
            methods=["POST"],
        ),
    ]
