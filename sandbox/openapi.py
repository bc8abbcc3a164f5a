"""The OpenAPI 3.0 document of the ten provider routes (served at /openapi.json)."""

from __future__ import annotations

from typing import Any

_FAILED = {
    "type": "object",
    "required": ["status", "message"],
    "properties": {"status": {"type": "string", "enum": ["failed"]}, "message": {"type": "string"}},
}
_VALIDATION = {
    "type": "object",
    "required": ["status", "message", "errors"],
    "properties": {
        "status": {"type": "string", "enum": ["failed"]},
        "message": {"type": "string", "enum": ["Validation failed"]},
        "errors": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
_FORBIDDEN = {
    "type": "object",
    "required": ["message"],
    "properties": {"message": {"type": "string"}},
}
_KOBO = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
_TRANSACTION = {
    "type": "object",
    "properties": {
        "reference": {"type": "string"},
        "merchant_reference": {"type": "string"},
        "type": {"type": "string", "enum": ["transfer", "collection"]},
        "amount": {"type": "integer"},
        "fee": {"type": "integer"},
        "status": {"type": "string", "enum": ["pending", "successful", "failed"]},
        "failure_reason": {"type": "string", "nullable": True},
        "created_at": {"type": "string", "format": "date-time"},
        "completed_at": {"type": "string", "format": "date-time", "nullable": True},
    },
}
_CUSTOMER = {
    "type": "object",
    "properties": {
        name: {"type": "string"}
        for name in ("reference", "first_name", "last_name", "email", "phone", "bvn")
    },
}
_VIRTUAL_ACCOUNT = {
    "type": "object",
    "properties": {
        "uid": {"type": "string"},
        "type": {"type": "string", "enum": ["static", "dynamic"]},
        "status": {"type": "string", "enum": ["active", "inactive"]},
        "account_number": {"type": "string"},
        "account_name": {"type": "string"},
        "bank_name": {"type": "string"},
        "customer": _CUSTOMER,
        "expected_amount": {"type": "integer", "nullable": True},
        "meta": {"type": "object"},
        "created_at": {"type": "string", "format": "date-time"},
    },
}


def _envelope(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["status", "data"],
        "properties": {
            "status": {"type": "string", "enum": ["success"]},
            "message": {"type": "string"},
            "data": data,
        },
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _responses(ok: int, data: dict[str, Any], *extra: int) -> dict[str, Any]:
    known = {
        400: _json(_FAILED, "Refused (transfer cause, duplicate reference, failed enquiry)"),
        401: _json(_FAILED, "Unauthenticated (also the public key on a secret-key endpoint)"),
        403: _json(_FORBIDDEN, "IP whitelisting refused the caller"),
        404: _json(_FAILED, "Not found"),
        422: _json(_VALIDATION, "Validation failed"),
        429: _json(_FAILED, "Rate limited (fault); see Retry-After"),
        503: _json(_FAILED, "Service unavailable (fault)"),
    }
    answers = {str(ok): _json(_envelope(data), "Success"), "401": known[401], "422": known[422]}
    answers.update({str(code): known[code] for code in extra})
    return answers


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _query(name: str, schema: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema}


def build_openapi() -> dict[str, Any]:
    """The document; built on request, never at import time."""
    va_list = {"type": "array", "items": _VIRTUAL_ACCOUNT}
    lookup = _responses(200, _TRANSACTION, 404, 429, 503)
    return {
        "openapi": "3.0.3",
        "info": {"title": "Payments provider sandbox", "version": "1.0.0"},
        "components": {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearerAuth": []}],
        "paths": {
            "/v1/virtual-accounts": {
                "post": {
                    "operationId": "createVirtualAccount",
                    "requestBody": _body(
                        {
                            "type": {"type": "string", "enum": ["static", "dynamic"]},
                            "customer": _CUSTOMER,
                            "expected_amount": {"type": "integer", "minimum": 0},
                            "meta": {"type": "object"},
                        },
                        ["type", "customer"],
                    ),
                    "responses": _responses(201, _VIRTUAL_ACCOUNT),
                },
                "get": {
                    "operationId": "listVirtualAccounts",
                    "parameters": [
                        _query("type", {"type": "string", "enum": ["static", "dynamic"]}),
                        _query("status", {"type": "string", "enum": ["active", "inactive"]}),
                        _query("page", {"type": "integer", "minimum": 1}),
                        _query("per_page", {"type": "integer", "minimum": 1, "maximum": 100}),
                    ],
                    "responses": _responses(200, va_list),
                },
            },
            "/v1/virtual-accounts/{uid}": {
                "get": {
                    "operationId": "getVirtualAccount",
                    "parameters": [_path("uid")],
                    "responses": _responses(200, _VIRTUAL_ACCOUNT, 404),
                }
            },
            "/v1/virtual-accounts/{uid}/deactivate": {
                "post": {
                    "operationId": "deactivateVirtualAccount",
                    "parameters": [_path("uid")],
                    "responses": _responses(200, _VIRTUAL_ACCOUNT, 404),
                }
            },
            "/v1/collection/bank-transfer": {
                "post": {
                    "operationId": "createCollection",
                    "requestBody": _body(
                        {
                            "currency": {"type": "string", "enum": ["NGN"]},
                            "reference": {"type": "string", "minLength": 1, "maxLength": 100},
                            "amount": _KOBO,
                            "customer_name": {"type": "string"},
                            "customer_email": {"type": "string"},
                            "customer_phone": {"type": "string"},
                            "meta": {"type": "object"},
                        },
                        ["currency", "reference", "amount"],
                    ),
                    "responses": _responses(200, {"type": "object"}, 400),
                }
            },
            "/v1/collection/{reference}": {
                "get": {
                    "operationId": "getCollection",
                    "parameters": [_path("reference")],
                    "responses": lookup,
                }
            },
            "/v1/transaction/{reference}": {
                "get": {
                    "operationId": "getTransaction",
                    "parameters": [_path("reference")],
                    "responses": lookup,
                }
            },
            "/v1/transfer/initiate": {
                "post": {
                    "operationId": "initiateTransfer",
                    "requestBody": _body(
                        {
                            "amount": _KOBO,
                            "bank_code": {"type": "string"},
                            "account_number": {"type": "string", "pattern": "^[0-9]{10}$"},
                            "reference": {"type": "string", "minLength": 1, "maxLength": 100},
                        },
                        ["amount", "bank_code", "account_number", "reference"],
                    ),
                    "responses": _responses(200, {"type": "object"}, 400, 403),
                }
            },
            "/v1/account-enquiry": {
                "get": {
                    "operationId": "accountEnquiry",
                    "parameters": [
                        _query(
                            "account_number",
                            {"type": "string", "pattern": "^[0-9]{10}$"},
                            required=True,
                        ),
                        _query("bank_code", {"type": "string"}, required=True),
                    ],
                    "responses": _responses(200, {"type": "object"}, 400, 429, 503),
                }
            },
            "/v1/banks": {
                "get": {
                    "operationId": "listBanks",
                    "responses": _responses(200, {"type": "array", "items": {"type": "object"}}),
                }
            },
        },
    }
