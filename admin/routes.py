"""The operators' routes: the JSON API under `/api`, the reports page and the console.

Every route is declared here with the role it needs, in one table, so that no route can forget
its rule; tests/integration/admin/test_route_roles.py walks the app's routes against it.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from admin import (
    api,
    audit_api,
    collections_api,
    findings_api,
    login,
    relay_api,
    report_files,
    reports_page,
    statements_api,
)
from admin.console import (
    findings_page,
    pages,
    periods_page,
    relay_pages,
    statement_forms,
    statements_page,
)
from admin.console import reports_page as console_reports
from admin.identity import Role, page, report_page, requires

VIEWER, FINANCE, ADMIN = Role.VIEWER, Role.FINANCE, Role.ADMIN


def admin_routes() -> list[BaseRoute]:
    """The admin routes (the app's state holds `engine`, `settings`, `admin_token` and
    `payout_client`)."""
    return [
        # Signing in and out prove or end an identity themselves (login is rate-limited per
        # address; logout needs the session's CSRF token).
        Route("/login", login.login, methods=["POST"]),
        # A person who types /login expects the sign-in page.
        Route("/login", login.login_form_redirect, methods=["GET"]),
        Route("/logout", login.logout, methods=["POST"]),
        Route("/console/login", login.login_page, methods=["GET"]),
        # Who did what, from where: for admins only.
        Route("/api/audit", requires(ADMIN)(audit_api.list_audit), methods=["GET"]),
        Route("/api/transfers", requires(VIEWER)(api.list_transfer_page), methods=["GET"]),
        Route("/api/transfers", requires(ADMIN)(api.post_payout), methods=["POST"]),
        Route("/api/transfers/expected", requires(ADMIN)(api.post_expected), methods=["POST"]),
        Route("/api/transfers/{reference}", requires(VIEWER)(api.get_transfer), methods=["GET"]),
        Route(
            "/api/collections",
            requires(VIEWER)(collections_api.list_collection_page),
            methods=["GET"],
        ),
        Route(
            "/api/collections", requires(ADMIN)(collections_api.post_collection), methods=["POST"]
        ),
        Route(
            "/api/collections/expected",
            requires(ADMIN)(collections_api.post_expected_collection),
            methods=["POST"],
        ),
        Route(
            "/api/collections/{reference}",
            requires(VIEWER)(collections_api.get_collection),
            methods=["GET"],
        ),
        Route(
            "/api/transfers/{reference}/checks",
            requires(VIEWER)(findings_api.transfer_checks),
            methods=["GET"],
        ),
        Route("/api/findings", requires(VIEWER)(findings_api.list_findings), methods=["GET"]),
        Route("/api/findings/ack", requires(FINANCE)(findings_api.ack_many), methods=["POST"]),
        Route("/api/findings/{id}/ack", requires(FINANCE)(findings_api.ack_one), methods=["POST"]),
        Route(
            "/api/findings/assign", requires(FINANCE)(findings_api.assign_many), methods=["POST"]
        ),
        Route(
            "/api/findings/{id}/assign", requires(FINANCE)(findings_api.assign), methods=["POST"]
        ),
        Route("/api/findings/{id}/notes", requires(FINANCE)(findings_api.note), methods=["POST"]),
        # Statements and periods: finance and admin import, work lines and close; viewers read.
        Route("/api/statements", requires(VIEWER)(statements_api.list_imports), methods=["GET"]),
        Route(
            "/api/statements", requires(FINANCE)(statements_api.post_statement), methods=["POST"]
        ),
        Route(
            "/api/statements/lines",
            requires(VIEWER)(statements_api.list_statement_lines),
            methods=["GET"],
        ),
        Route(
            "/api/statements/lines/{id}/match",
            requires(FINANCE)(statements_api.match_line),
            methods=["POST"],
        ),
        Route(
            "/api/statements/lines/{id}/unmatch",
            requires(FINANCE)(statements_api.unmatch_line),
            methods=["POST"],
        ),
        Route(
            "/api/statements/lines/{id}/ignore",
            requires(FINANCE)(statements_api.ignore_line),
            methods=["POST"],
        ),
        Route(
            "/api/periods/tie-out", requires(VIEWER)(statements_api.get_tie_out), methods=["GET"]
        ),
        Route(
            "/api/periods/close", requires(FINANCE)(statements_api.close_period), methods=["POST"]
        ),
        Route("/api/endpoints", requires(VIEWER)(relay_api.list_endpoint_records), methods=["GET"]),
        Route("/api/endpoints", requires(ADMIN)(relay_api.post_endpoint), methods=["POST"]),
        Route("/api/endpoints/{id}", requires(VIEWER)(relay_api.get_endpoint), methods=["GET"]),
        Route("/api/endpoints/{id}", requires(ADMIN)(relay_api.patch_endpoint), methods=["PATCH"]),
        Route(
            "/api/endpoints/{id}", requires(ADMIN)(relay_api.delete_endpoint), methods=["DELETE"]
        ),
        Route(
            "/api/endpoints/{id}/rotate-secret",
            requires(ADMIN)(relay_api.rotate_secret),
            methods=["POST"],
        ),
        Route("/api/events", requires(VIEWER)(relay_api.list_event_page), methods=["GET"]),
        Route("/api/events/{id}", requires(VIEWER)(relay_api.get_event), methods=["GET"]),
        Route(
            "/api/deliveries/{id}/retry",
            requires(ADMIN)(relay_api.retry_delivery),
            methods=["POST"],
        ),
        # Reading figures is for every role; acknowledging (and exporting files) for finance.
        Route("/api/reports/summary", requires(VIEWER)(reports_page.summary_api), methods=["GET"]),
        Route("/reports", report_page(VIEWER)(reports_page.reports_page), methods=["GET"]),
        Route(
            "/reports/findings/{id:int}/ack",
            report_page(FINANCE)(reports_page.acknowledge),
            methods=["POST"],
        ),
        Route("/console", page(VIEWER)(pages.overview_page), methods=["GET"]),
        # Every role reads a period's figures; only finance and admin export its files.
        Route(
            "/console/reports",
            page(VIEWER)(console_reports.reports_console_page),
            methods=["GET"],
        ),
        Route(report_files.DOWNLOAD_PATH, page(FINANCE)(report_files.download), methods=["GET"]),
        Route("/console/collections", page(VIEWER)(pages.collections_page), methods=["GET"]),
        Route(
            "/console/collections/{reference:path}",
            page(VIEWER)(pages.collection_page),
            methods=["GET"],
        ),
        Route("/console/transfers", page(VIEWER)(pages.transfers_page), methods=["GET"]),
        Route(
            "/console/transfers/{reference:path}",
            page(VIEWER)(pages.transfer_page),
            methods=["GET"],
        ),
        Route("/console/findings", page(VIEWER)(findings_page.findings_page), methods=["GET"]),
        Route("/console/findings/ack", page(FINANCE)(findings_page.acknowledge), methods=["POST"]),
        Route(
            "/console/findings/bulk", page(FINANCE)(findings_page.work_matching), methods=["POST"]
        ),
        Route(
            "/console/findings/{id}/assign", page(FINANCE)(findings_page.assign), methods=["POST"]
        ),
        Route("/console/findings/{id}/notes", page(FINANCE)(findings_page.note), methods=["POST"]),
        Route("/console/endpoints", page(VIEWER)(relay_pages.endpoints_page), methods=["GET"]),
        Route("/console/endpoints/{id}/replay", page(ADMIN)(relay_pages.replay), methods=["POST"]),
        Route("/console/deliveries/{id}/retry", page(ADMIN)(relay_pages.retry), methods=["POST"]),
        Route("/console/audit", page(ADMIN)(relay_pages.audit_page), methods=["GET"]),
        Route(
            "/console/statements", page(VIEWER)(statements_page.statements_page), methods=["GET"]
        ),
        Route(
            "/console/statements/import",
            page(FINANCE)(statement_forms.import_file),
            methods=["POST"],
        ),
        Route(
            "/console/statements/lines/{id}/confirm",
            page(FINANCE)(statement_forms.confirm),
            methods=["POST"],
        ),
        Route(
            "/console/statements/lines/{id}/match",
            page(FINANCE)(statement_forms.match),
            methods=["POST"],
        ),
        Route(
            "/console/statements/lines/{id}/ignore",
            page(FINANCE)(statement_forms.ignore),
            methods=["POST"],
        ),
        Route(
            "/console/statements/lines/{id}/unmatch",
            page(FINANCE)(statement_forms.unmatch),
            methods=["POST"],
        ),
        Route("/console/periods", page(VIEWER)(periods_page.periods_page), methods=["GET"]),
        Route(
            "/console/periods/close", page(FINANCE)(statement_forms.close_period), methods=["POST"]
        ),
        Route("/console/periods/download", page(VIEWER)(periods_page.download), methods=["GET"]),
    ]
