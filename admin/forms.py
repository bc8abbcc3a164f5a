"""Reading a small HTML form (or a JSON object) posted to an admin route."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from starlette.requests import Request

MAX_FORM_BYTES = 16 * 1024


async def read_form(request: Request, *, limit: int = MAX_FORM_BYTES) -> dict[str, str]:
    """The fields of a urlencoded form or a JSON object (values as text); ValueError (or
    UnicodeDecodeError) when the body is too large or neither."""
    # Parsed by hand: Starlette's form parser needs python-multipart for urlencoded bodies too.
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ValueError("form too large")
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json":
        data = json.loads(body or b"{}")
        if not isinstance(data, dict):
            raise ValueError("body must be a JSON object")
        return {str(k): str(v) for k, v in data.items() if v is not None}
    if media not in ("application/x-www-form-urlencoded", ""):
        raise ValueError("send a form (application/x-www-form-urlencoded) or JSON")
    fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    return {key: values[-1] for key, values in fields.items()}
