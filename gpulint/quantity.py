"""Kubernetes resource quantities (`500m`, `16Gi`, `1.5`, `2e3`) as exact decimals."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Context, Decimal

_SUFFIX: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?\Z"
)
_MILLI = Decimal("0.001")
#: The largest amount a quantity may stand for: resource.Quantity documents that "no quantity
#: may represent a number greater than 2^63-1 in magnitude".
MAX_QUANTITY = Decimal(2**63 - 1)


def parse_quantity(value: object) -> Decimal | None:
    """The amount `value` stands for, or None when it is not a valid quantity.

    A number larger in magnitude than MAX_QUANTITY (`1e26`, a 29-digit integer) is not a valid
    quantity. (The API reads a `null` quantity as zero; callers that see one decide what it
    means for them.)
    """
    amount = _amount(value)
    if amount is None or abs(amount) > MAX_QUANTITY:
        return None
    return amount


def parse_stored_quantity(value: object) -> Decimal | None:
    """The amount the API server stores for `value`, or None when it refuses it.

    apimachinery's ParseQuantity does not refuse a quantity above MAX_QUANTITY: it caps a
    decimal or binary SI one at 2^63-1 ("the max is just a simple cap", `quantity.go`) and keeps
    an exponent one whole. Cluster objects hold such amounts on purpose: GKE's Dynamic Workload
    Scheduler guide has users apply a ClusterQueue with `nominalQuota: 1000000000Ti`, a quota
    meant to never bind. Read cluster objects with this; a pod's resources go through
    `parse_quantity`.
    """
    amount = _amount(value)
    if amount is None:
        return None
    return max(min(amount, MAX_QUANTITY), -MAX_QUANTITY)


def _amount(value: object) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return Decimal(repr(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    try:
        amount = Decimal(number)
        if exponent:
            return amount * Decimal(10) ** int(exponent[1:])
    except (ArithmeticError, ValueError):  # Overflow, InvalidOperation; int() of 5000 digits
        return None
    return amount * _SUFFIX[suffix or ""]


def round_up_to_milli(amount: Decimal) -> Decimal:
    """API defaulting rounds every quantity up to milli precision before validating it."""
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= -3:
        return amount  # no digit below a milli: nothing to round, however large
    # The default context holds 28 digits: a larger amount in millis would not fit, and
    # quantize() would raise instead of rounding.
    digits = max(amount.adjusted(), 0) + 4
    return amount.quantize(_MILLI, rounding=ROUND_CEILING, context=Context(prec=max(28, digits)))


def is_whole(amount: Decimal) -> bool:
    """True when the (milli-rounded) amount is an integer, as extended resources require."""
    rounded = round_up_to_milli(amount)
    # Not `% 1`: its integer part must fit the context's 28 digits.
    return rounded == rounded.to_integral_value()


def format_quantity(amount: Decimal) -> str:
    """A short human form: `2`, `0.5`, `1.25`."""
    return f"{amount.normalize():f}"
