"""Bounds of the lenient path: its work per message (`LenientLimits`), and
the error texts it builds from a peer's values, cut at the source."""

from __future__ import annotations

from typing import Any, TypeGuard

from msgspec import DecodeError, ValidationError


class LenientLimits:
    """Bounds on the lenient path's work for one message, and on the error
    texts the codec builds.

    The lenient rules run in Python, value by value, so a small hostile message
    (a million invalid items in a skip-invalid-items array) could otherwise
    cost seconds of CPU; an error text quoting a peer's value whole (a 40 MB
    array as a tag) would cost as much again. Shared by every generated module:

    >>> from acp_schema import LENIENT_LIMITS
    >>> LENIENT_LIMITS.max_repairs, LENIENT_LIMITS.max_quoted, LENIENT_LIMITS.max_error_text
    (1000, 64, 1024)
    """

    __slots__ = ("max_error_text", "max_quoted", "max_repairs")

    def __init__(
        self,
        *,
        max_repairs: int = 1000,
        max_quoted: int = 64,
        max_error_text: int = 1024,
    ) -> None:
        #: Values one message may have dropped (skip-invalid-items) or replaced
        #: (default-on-error) by the lenient rules; one more and the whole
        #: message is a `LenientLimitError`. Default 1,000.
        self.max_repairs = max_repairs
        #: Characters of a peer's string (a tag, a property name) an error
        #: text quotes; an array or object is described by its size, never
        #: quoted. Default 64.
        self.max_quoted = max_quoted
        #: Characters of an error message `decode` and `convert` raise (the
        #: rest is cut, with a note of how much). Default 1,024.
        self.max_error_text = max_error_text

    def __repr__(self) -> str:
        return (
            f"LenientLimits(max_repairs={self.max_repairs}, "
            f"max_quoted={self.max_quoted}, max_error_text={self.max_error_text})"
        )


#: The limits every `Codec` applies (set its attributes to change them).
LENIENT_LIMITS = LenientLimits()


class LenientLimitError(ValidationError):
    """A message needed more lenient repairs than `LENIENT_LIMITS` allows.

    Never absorbed by a lenient rule: the whole message is rejected.
    """


class Work:
    """The lenient path's budget for one message."""

    __slots__ = ("left",)

    def __init__(self, limits: LenientLimits) -> None:
        self.left = limits.max_repairs

    def repair(self, path: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise LenientLimitError(
                f"More than {LENIENT_LIMITS.max_repairs} values dropped or replaced"
                f" by the lenient rules (LENIENT_LIMITS.max_repairs) - at `{path}`"
            )


def shown(value: Any) -> str:
    """`value` for an error text, bounded at the source: a string quoted up
    to `LenientLimits.max_quoted` characters, an array or object described
    by its size (never ``repr()`` of a whole value: a 40 MB array would cost
    seconds and gigabytes before any text is cut)."""
    if isinstance(value, str):
        limit = LENIENT_LIMITS.max_quoted
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() <= 64:
            return repr(value)
        return f"an integer of {value.bit_length()} bits"
    if is_list(value):
        return f"an array of {len(value)} items"
    if is_dict(value):
        return f"an object of {len(value)} properties"
    return f"a {type(value).__name__}"


def key_shown(key: str) -> str:
    """A property name in a path, bounded as `_show` bounds strings."""
    limit = LENIENT_LIMITS.max_quoted
    return key if len(key) <= limit else f"{key[:limit]}...({len(key)})"


def text_bounded(error: ValidationError) -> ValidationError:
    """`error`, its text cut to `LenientLimits.max_error_text` (msgspec's own
    messages quote an invalid string whole)."""
    text = str(error)
    limit = LENIENT_LIMITS.max_error_text
    if len(text) <= limit:
        return error
    cut = type(error)(f"{text[:limit]}... ({len(text) - limit} more characters)")
    cut.__cause__ = error.__cause__
    return cut


def too_deep() -> DecodeError:
    return DecodeError("JSON is nested too deeply (msgspec's recursion limit)")


def is_list(value: Any) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def is_dict(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if is_list(value):
        return "array"
    return "object"


def unexpected(error: Exception) -> ValidationError:
    """Any other failure while decoding is reported as invalid input, never
    raised as is (the caller handles msgspec's errors only)."""
    text = str(error)
    limit = LENIENT_LIMITS.max_error_text
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return ValidationError(f"Invalid value ({type(error).__name__}: {text})")


def error_at(message: str, path: str) -> ValidationError:
    return ValidationError(f"{message} - at `{path}`")


def rerooted(error: ValidationError, path: str) -> ValidationError:
    """Re-root msgspec's ``- at `$.x``` suffix under `path`."""
    message, sep, where = str(text_bounded(error)).rpartition(" - at `")
    if not sep:
        return error_at(str(error), path)
    return error_at(message, path + where.rstrip("`")[1:])
