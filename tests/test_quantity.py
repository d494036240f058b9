"""Kubernetes quantities as exact decimals, and the integer rule for extended resources."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpulint.quantity import format_quantity, is_whole, parse_quantity, round_up_to_milli


@pytest.mark.parametrize(
    ("value", "amount"),
    [
        (1, Decimal(1)),
        ("2", Decimal(2)),
        (0.5, Decimal("0.5")),
        ("500m", Decimal("0.5")),
        ("1.5", Decimal("1.5")),
        ("-1", Decimal(-1)),
        ("+3", Decimal(3)),
        ("16Gi", Decimal(16 * 2**30)),
        ("1k", Decimal(1000)),
        ("1M", Decimal(10**6)),
        ("2e3", Decimal(2000)),
        ("1E-3", Decimal("0.001")),
        ("100u", Decimal("0.0001")),
        ("5n", Decimal("5e-9")),
        (".5", Decimal("0.5")),
        ("1.", Decimal(1)),
        (" 2 ", Decimal(2)),  # Quantity.UnmarshalJSON trims spaces
        ("1e-99999999", Decimal(0)),
    ],
)
def test_valid_quantities(value: object, amount: Decimal) -> None:
    assert parse_quantity(value) == amount


@pytest.mark.parametrize(
    "value",
    [
        *("one", "", "1.5.2", "1Gb", "Gi", "1 Gi", None, True, [1], {"a": 1}, "1e99999999"),
        *(f"1e{'9' * 5000}", float("nan"), float("inf")),
        # more than 2^63-1, the most a quantity may stand for
        *("1e26", "1e999999", 10**28, "12345678901234567890123456789", 1e308, 2**63, "8Ei"),
        *("-1e26", -(2**63)),
    ],
)
def test_invalid_quantities(value: object) -> None:
    assert parse_quantity(value) is None


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("1", True),
        ("1000m", True),
        ("4.0", True),
        ("1k", True),
        ("0.5", False),
        ("500m", False),
        ("1.5", False),
        ("1001m", False),
        # defaulting rounds up to milli precision first: 0.0001 becomes 1m, not 0
        ("0.0001", False),
        ("100u", False),
    ],
)
def test_is_whole_after_rounding_up_to_milli(text: str, whole: bool) -> None:
    amount = parse_quantity(text)
    assert amount is not None
    assert is_whole(amount) is whole


def test_the_largest_quantity_is_2_to_the_63_minus_1() -> None:
    assert parse_quantity(2**63 - 1) == Decimal(2**63 - 1)
    assert parse_quantity("9223372036854775807") == Decimal(2**63 - 1)
    assert parse_quantity("7Ei") == Decimal(7 * 2**60)


def test_round_up_to_milli() -> None:
    assert round_up_to_milli(Decimal("0.0001")) == Decimal("0.001")
    assert round_up_to_milli(Decimal("1.2341")) == Decimal("1.235")
    assert round_up_to_milli(Decimal(2)) == Decimal("2.000")


@pytest.mark.parametrize(
    ("amount", "rounded"),
    [
        (Decimal("1e26"), Decimal("1e26")),
        (Decimal("1e999999"), Decimal("1e999999")),
        (
            Decimal("123456789012345678901234567890.0001"),
            Decimal("123456789012345678901234567890.001"),
        ),
        (Decimal(2**63 - 1) + Decimal("0.0001"), Decimal(2**63 - 1) + Decimal("0.001")),
    ],
)
def test_round_up_to_milli_of_amounts_beyond_the_default_precision(
    amount: Decimal, rounded: Decimal
) -> None:
    assert round_up_to_milli(amount) == rounded
    assert is_whole(amount) is (rounded == rounded.to_integral_value())


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Decimal("2.000"), "2"),
        (Decimal("0.5"), "0.5"),
        (Decimal("1e3"), "1000"),
        (Decimal("1.25"), "1.25"),
    ],
)
def test_format_quantity(amount: Decimal, text: str) -> None:
    assert format_quantity(amount) == text
