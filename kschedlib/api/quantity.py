"""Kubernetes ``resource.Quantity`` with the exact semantics of apimachinery v0.35 (Kubernetes 1.35).

A quantity is a signed decimal number plus a *format* (``DecimalSI``, ``BinarySI`` or
``DecimalExponent``) that only affects how it is printed.  Values are exact (never float).

Go keeps a quantity in one of two internal representations: a fast ``int64Amount``
(``value * 10**scale`` with an int64 mantissa and an int32 scale) or an arbitrary precision
``inf.Dec``.  A few observable behaviours depend on which one a value lives in (rounding of
negative fractions in ``Value()``/``MilliValue()``, int64 wrap-around on overflow), so this module
mirrors that choice exactly: it is made by the parser and by ``+``/``-`` just like in Go.
Equality, ordering and hashing only look at the numeric value.

Behaviour deliberately matches Kubernetes 1.35, including quirks fixed upstream later (see
``tests/api/test_quantity.py`` for each): ``"Gi"``/``"m"``/``"+"``/``"."`` parse as zero, some
non-canonical inputs (``"+1Ki"``, ``"1.234k"``) print back verbatim, DecimalSI values of 10**21 or
more and BinarySI values of 2**70 or more print without their magnitude suffix, ``value()`` of a
negative fraction held as ``inf.Dec`` rounds towards +inf (``"-.5e-10"`` gives +1), and results
that do not fit an int64 wrap around (amd64 conversion rules).
"""

from __future__ import annotations

import decimal
import re
from fractions import Fraction
from functools import lru_cache
from typing import Final

import attrs

from kschedlib.errors import QuantityError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "FORMATS",
    "Quantity",
    "must_parse",
    "parse_quantity",
    "quantity_from_int",
    "quantity_from_milli",
]

DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
FORMATS: Final = frozenset({DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT})

_MAX_I64: Final = (1 << 63) - 1
_MIN_I64: Final = -(1 << 63)
_MAX_I32: Final = (1 << 31) - 1
_MIN_I32: Final = -(1 << 31)
_NANO: Final = -9
# Go 1.35 only takes the int64 fast path for at most this many mantissa digits.
_MAX_INT64_FACTORS: Final = 18
# CPython refuses int<->str conversions above 4300 digits; go through decimal beyond this.
_SAFE_DIGITS: Final = 4000
_SAFE_LIMIT: Final = 10**_SAFE_DIGITS
# Exact results needing more decimal digits than this raise OverflowError instead of hanging
# (Go's inf.Dec would try to build them); real Kubernetes values need fewer than 40.
_MAX_DIGITS: Final = 1_000_000

_DEC_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BIN_SUFFIXES: Final[dict[str, int]] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}
_DEC_SUFFIX_OF: Final[dict[int, str]] = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_SUFFIX_OF: Final[dict[int, str]] = {v: k for k, v in _BIN_SUFFIXES.items()}

# Mirrors Go's hand-written scanner: sign, leading zeros, integer digits, optional fraction,
# suffix letters, then an optional signed run of digits (the exponent).
_SCAN: Final = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*)([-+]?[0-9]*)")
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")


# --------------------------------------------------------------------------- Go integer helpers


def _wrap64(x: int) -> int:
    """Two's complement int64 wrap-around, as Go integer arithmetic does."""
    if _MIN_I64 <= x <= _MAX_I64:
        return x
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x > _MAX_I64 else x


def _i32(x: int) -> int:
    """Two's complement int32 wrap-around (Go's ``Scale`` and ``inf.Scale`` are int32)."""
    if _MIN_I32 <= x <= _MAX_I32:
        return x
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x > _MAX_I32 else x


def _in64(x: int) -> bool:
    return _MIN_I64 <= x <= _MAX_I64


def _tdiv(a: int, b: int) -> int:
    """Go's truncating integer division for a positive divisor."""
    q = abs(a) // b
    return -q if a < 0 else q


def _go_rem3(a: int) -> int:
    """Go's ``a % 3`` (the result takes the sign of ``a``)."""
    r = abs(a) % 3
    return -r if a < 0 else r


def _int_of(digits: str) -> int:
    if len(digits) <= _SAFE_DIGITS:
        return int(digits)
    return int(decimal.Decimal(digits))


def _str_of(n: int) -> str:
    if -_SAFE_LIMIT < n < _SAFE_LIMIT:
        return str(n)
    return str(decimal.Decimal(n))


def _strip10(n: int) -> tuple[int, int]:
    """Split ``n`` into ``(m, t)`` with ``n == m * 10**t`` and ``m`` free of trailing zeros."""
    if n == 0:
        return 0, 0
    t = 0
    while n % 10_000_000_000_000_000 == 0:
        n //= 10_000_000_000_000_000
        t += 16
    while n % 10 == 0:
        n //= 10
        t += 1
    return n, t


def _ndigits(n: int) -> int:
    """Number of decimal digits of ``abs(n)`` (``n != 0``) without converting to a string."""
    n = abs(n)
    if n < 10**18:
        return len(str(n))
    d = n.bit_length() * 30103 // 100000 + 1
    while 10 ** (d - 1) > n:
        d -= 1
    while 10**d <= n:
        d += 1
    return d


def _wrap_pow10(m: int, k: int) -> int:
    """``int64(m * 10**k)`` with wrap-around, for ``k >= 0``, without building huge numbers."""
    if k >= 64:  # 10**k is then a multiple of 2**64
        return 0
    return _wrap64(m * 10**k)


def _pos_scale(base: int, scale: int) -> tuple[int, bool]:
    """Go 1.35 ``positiveScaleInt64``: ``base * 10**scale`` and whether it fit an int64."""
    if scale <= 0:  # 0, or a wrapped negative scale for which Go's loop never runs
        return base, True
    if scale in (1, 2, 3, 6, 9):
        if base in (0, 1):
            return base * 10**scale, True
        if base == _MIN_I64:
            return 0, False
        c = base * 10**scale
        return (c, True) if _in64(c) else (_wrap64(c), False)
    if base == 0:
        return 0, True
    if scale >= 19:
        return 0, False
    c = base * 10**scale
    return (c, True) if _in64(c) else (0, False)


def _neg_scale(base: int, scale: int) -> int:
    """Go 1.35 ``negativeScaleInt64``: ``base / 10**scale`` rounded away from zero."""
    if scale <= 0:
        return base
    value = base
    fraction = False
    for _ in range(min(scale, 21)):  # value reaches 0 within 20 steps
        if not fraction and value % 10 != 0:
            fraction = True
        value = _tdiv(value, 10)
        if value == 0:
            if fraction:
                return 1 if base > 0 else -1
            return 0
    if fraction:
        value += 1 if base > 0 else -1
    return value


def _int_add(av: int, ascale: int, bv: int, bscale: int) -> tuple[int, int] | None:
    """Go 1.35 ``int64Amount.Add``; ``None`` when Go falls back to ``inf.Dec``."""
    if bv == 0:
        return av, ascale
    if av == 0:
        return bv, bscale
    if ascale == bscale:
        s = av + bv
        return (s, ascale) if _in64(s) else None
    if ascale > bscale:
        c, ok = _pos_scale(av, _i32(ascale - bscale))
        s = c + bv
        return (s, bscale) if ok and _in64(s) else None
    c, ok = _pos_scale(bv, _i32(bscale - ascale))
    s = av + c
    return (s, ascale) if ok and _in64(s) else None


def _dec_canonical(m: int, k: int, dscale: int) -> tuple[int, int]:
    """Go ``infDecAmount.AsCanonicalBytes`` for unscaled ``m * 10**k`` at inf scale ``dscale``."""
    amount, t = _strip10(m)
    exponent = _i32(_i32(-dscale) + _i32(k + t))
    while _go_rem3(exponent) != 0:
        amount *= 10
        exponent = _i32(exponent - 1)
    return amount, exponent


# --------------------------------------------------------------------------------- Quantity


def _invalid(s: str, detail: str) -> QuantityError:
    """The error Go's ParseQuantity would return, with the Kubernetes-style message."""
    return QuantityError(f'invalid quantity "{s}": {detail}')


@attrs.define(frozen=True, slots=True, eq=False, repr=False)
class Quantity:
    """An exact Kubernetes resource quantity; build it with :func:`parse_quantity` and friends.

    The numeric value is ``mant * 10**exp``.  ``dscale`` is ``None`` when Go would hold the
    value as an ``int64Amount`` (then ``mant``/``exp`` are exactly Go's value/scale), otherwise
    it is the scale of Go's ``inf.Dec`` (whose unscaled integer is ``value * 10**dscale``).
    """

    _mant: int
    _exp: int
    format: str
    _dscale: int | None = None
    _cached: str | None = None
    _key: tuple[int, int] | None = attrs.field(default=None, init=False)

    # ------------------------------------------------------------------ basic accessors

    def is_zero(self) -> bool:
        """True when the value is exactly zero."""
        return self._mant == 0

    def sign(self) -> int:
        """-1, 0 or 1 according to the sign of the value."""
        m = self._mant
        return (m > 0) - (m < 0)

    def as_fraction(self) -> Fraction:
        """The exact value as a :class:`~fractions.Fraction`.

        Raises OverflowError when that would need more than a million digits (e.g. ``1e2000000``).
        """
        if abs(self._exp) > _MAX_DIGITS and self._mant:
            raise OverflowError(f"quantity {self} is too large to convert exactly")
        if self._exp >= 0:
            return Fraction(self._mant * 10**self._exp)
        return Fraction(self._mant, 10**-self._exp)

    def _norm(self) -> tuple[int, int]:
        """Canonical ``(m, e)`` of the value: ``m`` has no trailing zeros, zero is ``(0, 0)``."""
        key = self._key
        if key is None:
            m, t = _strip10(self._mant)
            key = (m, self._exp + t) if m else (0, 0)
            object.__setattr__(self, "_key", key)
        return key

    # ------------------------------------------------------------------ Go value accessors

    def value(self) -> int:
        """Go ``Value()``: the value rounded up to an integer (see :meth:`scaled_value`)."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """Go ``MilliValue()``: the value in thousandths, rounded up (see :meth:`scaled_value`)."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """Go ``ScaledValue(scale)``: ``value / 10**scale`` rounded up, as a Go int64.

        Rounding is away from zero, except that Go 1.35 rounds a negative fraction held as
        ``inf.Dec`` towards +inf (its value can even become positive).  Results that do not fit
        an int64 wrap around or saturate exactly as Go 1.35 does on amd64.
        """
        if not _MIN_I32 <= scale <= _MAX_I32:
            raise ValueError(f"scale {scale} is outside the int32 range")
        m, e, ds = self._mant, self._exp, self._dscale
        if ds is None:
            if e < scale:
                return _neg_scale(m, _i32(scale - e))
            return _pos_scale(m, _i32(e - scale))[0]
        return _dec_scaled_value(m, e + ds, ds - _i32(-scale))

    # ------------------------------------------------------------------ comparisons

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 as this value is below, equal to or above ``other`` (Go ``Cmp``)."""
        sa, sb = self.sign(), other.sign()
        if sa != sb:
            return -1 if sa < sb else 1
        if sa == 0:
            return 0
        ma, ea = self._norm()
        mb, eb = other._norm()
        if ea != eb:
            oa, ob = _ndigits(ma) + ea, _ndigits(mb) + eb
            if oa != ob:
                return sa if oa > ob else -sa
            if ea > eb:
                ma *= 10 ** (ea - eb)
            else:
                mb *= 10 ** (eb - ea)
        return (ma > mb) - (ma < mb)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._norm() == other._norm()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._norm() != other._norm()

    def __hash__(self) -> int:
        return hash(self._norm())

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) >= 0

    # ------------------------------------------------------------------ arithmetic

    def __add__(self, other: Quantity) -> Quantity:
        """Go ``Add``: exact; the result takes ``other``'s format when ``self`` is zero.

        Raises OverflowError when the exact result would need more than a million digits.
        """
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, other._mant, other._exp)

    def __sub__(self, other: Quantity) -> Quantity:
        """Go ``Sub``: exact; the result takes ``other``'s format when ``self`` is zero."""
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, -other._mant, other._exp)

    def _combine(self, other: Quantity, om: int, oe: int) -> Quantity:
        fmt = other.format if self._mant == 0 else self.format
        ads, bds = self._dscale, other._dscale
        if ads is None and bds is None:
            # Go 1.35 negates an int64 subtrahend with wrap-around: -(-2**63) stays -2**63.
            res = _int_add(self._mant, self._exp, _wrap64(om), oe)
            if res is not None:
                return Quantity(res[0], res[1], fmt)
        # inf.Dec addition: exact value, scale is the larger of the two scales.
        da = _i32(-self._exp) if ads is None else ads
        db = _i32(-oe) if bds is None else bds
        am, ae = self._mant, self._exp
        if am and om and abs(ae - oe) > _MAX_DIGITS:
            raise OverflowError(f"{self} and {other} are too far apart in magnitude to combine")
        if om == 0:
            m, e = am, ae
        elif am == 0:
            m, e = om, oe
        elif ae <= oe:
            m, e = am + om * 10 ** (oe - ae), ae
        else:
            m, e = am * 10 ** (ae - oe) + om, oe
        return Quantity(m, e, fmt, max(da, db))

    def __neg__(self) -> Quantity:
        """Go ``Neg``: note that an int64 mantissa of -2**63 stays -2**63, as in Go 1.35."""
        if self._dscale is None:
            return Quantity(_wrap64(-self._mant), self._exp, self.format)
        return Quantity(-self._mant, self._exp, self.format, self._dscale)

    def __pos__(self) -> Quantity:
        return self

    # ------------------------------------------------------------------ formatting

    def __str__(self) -> str:
        """Go ``String()``: the canonical form, or the parsed text when Go keeps it verbatim."""
        s = self._cached
        if s is None:
            s = self._canonical()
            object.__setattr__(self, "_cached", s)
        return s

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, format={self.format!r})"

    def _canonical(self) -> str:
        m, e, ds = self._mant, self._exp, self._dscale
        if m == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            nm, ne = self._norm()
            if ne < 0 or (ne < 4 and -1024 < nm * 10**ne < 1024):
                fmt = DECIMAL_SI  # fractional or |value| < 1024: no binary form
            else:
                value = nm * 10**ne
                if value == _MIN_I64 and ds is None:
                    return str(value)  # Go cannot negate int64-min to strip its factors
                tz = (value & -value).bit_length() - 1
                times = tz // 10
                suffix = _BIN_SUFFIX_OF.get(times * 10, "")  # Go 1.35 drops the suffix past Ei
                return _str_of(value >> (10 * times)) + suffix
        elif fmt != DECIMAL_SI:
            fmt = DECIMAL_EXPONENT
        if ds is None:
            amount, exponent = _int_canonical(m, e)
        else:
            amount, exponent = _dec_canonical(m, e + ds, ds)
        if fmt == DECIMAL_SI:
            suffix = _DEC_SUFFIX_OF.get(exponent, "")  # Go 1.35 drops the suffix past E
        else:
            suffix = f"e{exponent}" if exponent else ""
        return _str_of(amount) + suffix


def _int_canonical(value: int, scale: int) -> tuple[int, int]:
    """Go ``int64Amount.AsCanonicalBytes``: mantissa and a multiple-of-3 exponent."""
    amount, times = _strip10(value)
    exponent = _i32(scale + times)
    r = _go_rem3(exponent)
    if r in (1, -2):
        factor, drop = 10, 1
    elif r in (2, -1):
        factor, drop = 100, 2
    else:
        return amount, exponent
    scaled = amount * factor
    if amount == _MIN_I64 or not _in64(scaled):
        return _dec_canonical(value, 0, _i32(-scale))
    return scaled, _i32(exponent - drop)


def _dec_scaled_value(m: int, k: int, dif: int) -> int:
    """Go 1.35 ``scaledValue`` for the unscaled integer ``m * 10**k`` and scale difference."""
    if dif == 0:
        return _wrap_pow10(m, k)
    if dif < 0:
        factor = 10**-dif if -dif <= 18 else _MIN_I64  # int64(+huge float) on amd64
        return _wrap64(_wrap_pow10(m, k) * factor)
    # Fast path is guarded by a *signed* comparison, so every negative value takes it.
    if dif < 19 and (m <= 0 or (k < 19 and m * 10**k < _MAX_I64)):
        u = _wrap_pow10(m, k)
        divisor = 10**dif
        q = _tdiv(u, divisor)
        return q + 1 if u != q * divisor else q
    # big.Int path: Euclidean division (floor), plus one when inexact.
    if k >= dif:
        return _wrap_pow10(m, k - dif)
    p = dif - k
    if p > m.bit_length():  # abs(m) < 10**p
        if m == 0:
            return 0
        return 1 if m > 0 else 0
    q, r = divmod(m, 10**p)
    q = _wrap64(q)
    return _wrap64(q + 1) if r else q


# --------------------------------------------------------------------------------- parsing


def parse_quantity(s: str) -> Quantity:
    """Go ``ParseQuantity``: parse ``s`` or raise :class:`~kschedlib.errors.QuantityError`.

    Results are cached (quantities are immutable); the cache key is the exact input string.
    """
    if not isinstance(s, str):
        raise QuantityError(f'invalid quantity "{s!s}": not a string')
    return _parse_cached(s)


def must_parse(s: str) -> Quantity:
    """Go ``MustParse``: like :func:`parse_quantity` (which already raises on bad input)."""
    return parse_quantity(s)


_COMMON: Final[dict[str, tuple[int, str]]] = {
    "m": (-3, DECIMAL_SI),
    "k": (3, DECIMAL_SI),
    "M": (6, DECIMAL_SI),
    "G": (9, DECIMAL_SI),
    "Ki": (10, BINARY_SI),
    "Mi": (20, BINARY_SI),
    "Gi": (30, BINARY_SI),
}


@lru_cache(maxsize=4096)
def _parse_cached(s: str) -> Quantity:
    # Fast path for the overwhelmingly common "<digits>[suffix]" forms without leading zeros.
    n = len(s)
    if 0 < n <= 13:
        i = n
        while i and not s[i - 1].isdigit():
            i -= 1
        digits, suffix = s[:i], s[i:]
        if digits.isascii() and digits.isdigit() and digits[0] != "0":
            if not suffix:
                cached = s if s[-3:] != "000" else None
                return Quantity(int(digits), 0, DECIMAL_SI, None, cached)
            else:
                spec = _COMMON.get(suffix)
                if spec is not None:
                    exponent, fmt = spec
                    if fmt == DECIMAL_SI:
                        cached = s if digits[-3:] != "000" else None
                        return Quantity(int(digits), exponent, fmt, None, cached)
                    if len(digits) <= 14 - exponent * 3 // 10:  # Go's binary fast-path bound
                        value = int(digits)
                        cached = s if value & 7 else None
                        return Quantity(value << exponent, 0, fmt, None, cached)
    return _parse_slow(s)


def _parse_slow(s: str) -> Quantity:
    if not s:
        raise _invalid(s, "empty string")
    match = _SCAN.fullmatch(s)
    if match is None:
        raise _invalid(s, "does not match <sign><number><suffix>")
    sign, zeros, raw_num, denom, letters, tail = match.groups()
    denom = denom or ""
    positive = sign != "-"
    suffix = letters + tail

    # Interpret the suffix.
    base = 10
    if suffix in _DEC_SUFFIXES:
        exponent, fmt = _DEC_SUFFIXES[suffix], DECIMAL_SI
    elif suffix in _BIN_SUFFIXES:
        base, exponent, fmt = 2, _BIN_SUFFIXES[suffix], BINARY_SI
    elif len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix, 1):
        parsed = _int_of(suffix[1:])
        if not _in64(parsed):
            raise _invalid(s, "exponent out of range")
        exponent, fmt = _i32(parsed), DECIMAL_EXPONENT  # Go 1.35 truncates to int32
    else:
        raise _invalid(s, f"unknown suffix {suffix!r}")

    num = raw_num or "0"
    if base == 10:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif not denom:
        scale = 0
        precision = 15 - len(num) - exponent * 3 // 10 - 1
    else:
        scale = 0
        precision = -1

    if precision >= 0:
        scale = _i32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            value = int(shifted)
            result = value << exponent if base == 2 else value
            if not positive:
                result = -result
            cached: str | None = None
            if base == 2:
                if value & 7:
                    cached = s
            elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                cached = s
            return Quantity(result, scale, fmt, None, cached)

    # inf.Dec path.
    digits = zeros + raw_num + denom
    if not digits:
        raise _invalid(s, "no digits")
    amount = _int_of(digits)
    if base == 2:
        amount <<= exponent
        dec_scale = len(denom)
    else:
        dec_scale = _i32(len(denom) + _i32(-exponent))
    if amount == 0:
        return Quantity(0, -dec_scale, fmt, dec_scale)
    # Round the magnitude up to nano precision: everything non-zero is at least 1n.
    if dec_scale <= 9:
        mant, exp = amount, -dec_scale
    else:
        drop = dec_scale - 9
        if drop > amount.bit_length():
            mant = 1
        else:
            q, r = divmod(amount, 10**drop)
            mant = q + 1 if r else q
        exp = _NANO
    dscale = 9
    if fmt == BINARY_SI:
        if mant > _MAX_I64 * 10**-exp:  # BinarySI is capped at 2**63-1
            mant, exp, dscale = _MAX_I64, 0, 0
        elif exp < 0 and mant < 10**-exp:
            fmt = DECIMAL_SI  # 0 < value < 1 has no binary form
    return Quantity(mant if positive else -mant, exp, fmt, dscale)


# --------------------------------------------------------------------------------- builders


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown quantity format {fmt!r}; expected one of {sorted(FORMATS)}")


def quantity_from_int(value: int, fmt: str = DECIMAL_SI) -> Quantity:
    """Go ``NewQuantity(value, fmt)``; values outside int64 are held exactly as ``inf.Dec``."""
    _check_format(fmt)
    if _in64(value):
        return Quantity(value, 0, fmt)
    return Quantity(value, 0, fmt, 0)


def quantity_from_milli(milli: int, fmt: str = DECIMAL_SI) -> Quantity:
    """Go ``NewMilliQuantity(milli, fmt)``: ``milli / 1000``, exactly."""
    _check_format(fmt)
    if _in64(milli):
        return Quantity(milli, -3, fmt)
    return Quantity(milli, -3, fmt, 3)
