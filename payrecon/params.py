"""Click parameter types for what people type: money in kobo, under the one rule of
`ledger.types` (docs/rules.md: Numbers from people)."""

from __future__ import annotations

from typing import IO, Any

import click

from ledger.errors import NumberInputError
from ledger.money import kobo_from_json, kobo_from_text
from payrecon.context import EXIT_USAGE

_SHOWN_CHARS = 40


class OptionValueError(click.ClickException):
    """A bad option value: one line `payrecon: --amount: …` and exit 2, without click's usage
    block (the contract's one clear line)."""

    exit_code = EXIT_USAGE

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"payrecon: {self.format_message()}", err=True, file=file)


# ParamType is generic (ParamType[int]) only from click 8.4; pyproject admits 8.1.7.
class Kobo(click.ParamType):  # type: ignore[type-arg]
    """An amount in kobo: ASCII digits 0-9 only, from `minimum` to 2^63-1."""

    name = "kobo"

    def __init__(self, *, minimum: int = 0) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            if isinstance(value, str):
                return kobo_from_text(value, minimum=self.minimum)
            return kobo_from_json(value, minimum=self.minimum)  # a default given as an int
        except NumberInputError as exc:
            name = param.opts[0] if param is not None and param.opts else "value"
            shown = value if len(str(value)) <= _SHOWN_CHARS else f"{str(value)[:_SHOWN_CHARS]}…"
            raise OptionValueError(f"{name}: {exc} (got {shown!r})") from None


# Every money option of the CLI takes one of these two.
KOBO = Kobo()
PAYOUT_KOBO = Kobo(minimum=1)  # a payout moves at least one kobo (payments.payouts.validate)
