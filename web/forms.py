"""Reading a small HTML form (or a JSON object) posted to an operators' route."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request

from web.body import read_body
from web.errors import MalformedBodyError, UnsupportedMediaError
from web.jsonbody import parse_json

MAX_FORM_BYTES = 64 * 1024
FORM = "application/x-www-form-urlencoded"


def media_type(request: Request) -> str:
    """The request's Content-Type without parameters, lower case ("" when absent)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def parse_form(body: bytes) -> dict[str, list[str]]:
    """Every value of each field of a urlencoded form; MalformedBodyError when it is not one."""
    try:
        # Parsed by hand: Starlette's form parser needs python-multipart for urlencoded too.
        return parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        raise MalformedBodyError("the form is not UTF-8 text") from None


async def read_form(request: Request, *, limit: int = MAX_FORM_BYTES) -> dict[str, str]:
    """The fields of a urlencoded form or a JSON object (values as text, the last of each).

    WebError when the body is late (408), too large (413), not a form or JSON object (400) or
    of another media type (415).
    """
    media = media_type(request)
    if media not in ("application/json", FORM, ""):
        raise UnsupportedMediaError(f"send a form ({FORM}) or JSON")
    body = await read_body(request, limit)
    if media == "application/json":
        data = parse_json(body or b"{}")
        if not isinstance(data, dict):
            raise MalformedBodyError("body must be a JSON object")
        return {str(k): str(v) for k, v in data.items() if v is not None}
    return {key: values[-1] for key, values in parse_form(body).items()}


async def read_form_fields(
    request: Request, *, limit: int = MAX_FORM_BYTES
) -> tuple[bytes, dict[str, list[str]]]:
    """The body of a posted urlencoded form and every value of each of its fields; WebError
    as `read_form`."""
    body = await read_body(request, limit)
    return body, parse_form(body)
