"""The one Jinja2 environment: the console's pages, the sign-in page, the HTML report and the
error pages, each package's templates under its own prefix (`console/`, `admin/`, `report/`,
`web/`).

Built on first use, once a process. The packages are named, not imported: the toolkit stays
below the surfaces that use it; each adds the filters it needs (`with_filters`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jinja2

# Prefix -> the package whose `templates/` directory it names.
TEMPLATE_PACKAGES = {
    "web": "web",
    "admin": "admin",
    "console": "admin.console",
    "report": "reconcile.reports",
}


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment (autoescape, strict undefined, no reloading)."""
    env = jinja2.Environment(
        loader=jinja2.PrefixLoader(
            {prefix: jinja2.PackageLoader(package) for prefix, package in TEMPLATE_PACKAGES.items()}
        ),
        # References, details, notes and operator names come from senders, the provider and
        # operators: every value is escaped unless a template marks it safe.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Package data does not change under a running process: no stat on every render.
        auto_reload=False,
    )
    env.filters["thousands"] = "{:,}".format
    return env


def with_filters(**filters: Callable[..., Any]) -> jinja2.Environment:
    """The shared environment with `filters` added (the same function under a name each time)."""
    env = environment()
    env.filters.update(filters)
    return env


def error_page(title: str, message: str, *, link: str | None, link_text: str = "") -> str:
    """A small self-contained HTML error page (web/templates/error.html)."""
    template = environment().get_template("web/error.html")
    return template.render(title=title, message=message, link=link, link_text=link_text)
