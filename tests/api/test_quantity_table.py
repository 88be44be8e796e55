"""resource.Quantity behaviour drawn from Go's quantity_test.go (a compact table)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.errors import QuantityError


@pytest.mark.parametrize(
    ("text", "canonical", "value", "milli"),
    [
        ("0", "0", 0, 0),
        ("1", "1", 1, 1000),
        ("100", "100", 100, 100000),
        ("0.5", "500m", 1, 500),
        (".5", "500m", 1, 500),
        ("1.5", "1500m", 2, 1500),
        ("1000m", "1", 1, 1000),
        ("100m", "100m", 1, 100),
        ("250m", "250m", 1, 250),
        ("0.0001", "100u", 1, 1),
        ("1n", "1n", 1, 1),
        ("1k", "1k", 1000, 1000000),
        ("1M", "1M", 1000000, 1000000000),
        ("1Ki", "1Ki", 1024, 1024000),
        ("100Mi", "100Mi", 104857600, 104857600000),
        ("1.5Gi", "1536Mi", 1610612736, 1610612736000),
        ("32Gi", "32Gi", 34359738368, 34359738368000),
        ("1e3", "1e3", 1000, 1000000),
        ("12e6", "12e6", 12000000, 12000000000),
        ("1E-2", "10e-3", 1, 10),
        ("110", "110", 110, 110000),
    ],
)
def test_parse_canonical_value_milli(text: str, canonical: str, value: int, milli: int) -> None:
    q = parse_quantity(text)
    assert str(q) == canonical
    assert q.value() == value
    assert q.milli_value() == milli


@pytest.mark.parametrize(
    "text",
    ["", " ", "1.5.0", "1 Gi", "1GB", "--1", "1e", "1ki", "1.0.0Mi", "abc", "1Mi ", "0x10"],
)
def test_invalid_quantities_raise(text: str) -> None:
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_quantity(text)


def test_comparison_and_arithmetic() -> None:
    assert parse_quantity("1Gi") > parse_quantity("1G")
    assert parse_quantity("1000m") == parse_quantity("1")
    assert (parse_quantity("1.5") + parse_quantity("500m")).value() == 2
    assert (parse_quantity("1") - parse_quantity("250m")).milli_value() == 750
    assert parse_quantity("0").is_zero()


milli = st.integers(min_value=0, max_value=10**12)


@given(milli, st.sampled_from(["m", "", "k", "Mi", "Gi"]))
def test_round_trip_through_canonical_form(n: int, suffix: str) -> None:
    q = parse_quantity(f"{n}{suffix}")
    assert parse_quantity(str(q)) == q
    assert parse_quantity(str(q)).as_fraction() == q.as_fraction()


@given(milli)
def test_milli_value_is_exact_for_milli_inputs(n: int) -> None:
    q = parse_quantity(f"{n}m")
    assert q.milli_value() == n
    assert q.value() == -(-n // 1000)  # rounds up
    assert isinstance(q, Quantity) and q.as_fraction() == Fraction(n, 1000)
