"""How a number is printed, once, for every table, report and figure label: to significant
digits (0.0572, 0.461, 12.3, 5.09e-05), whole numbers as they are, never `-0.000`, and a
missing value as a dash. Files keep every digit; only what people read is rounded."""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

DIGITS = 3  # significant digits shown
MISSING = "–"  # a value that is not there (NaN, None)


def format_number(value: Any, digits: int = DIGITS, *, signed: bool = False) -> str:
    """A number as printed: `digits` significant digits (trailing zeros kept, so a column
    reads evenly), integers and large numbers whole, scientific notation below 1e-4, a dash
    for a missing value; `signed` puts a `+` before positive values (differences). Text passes
    through. (A Table prints a float column of whole numbers, counts, as integers.)

    Examples:
        >>> [format_number(v) for v in (0.05719, 0.46066, 0.5, 12.345, 5.0876e-05, 1234.6, 42)]
        ['0.0572', '0.461', '0.500', '12.3', '5.09e-05', '1235', '42']
        >>> format_number(1.0), format_number(-2.0, signed=True), format_number(14.0)
        ('1.00', '-2.00', '14.0')
        >>> format_number(-0.0), format_number(-0.00004, signed=True)
        ('0', '-4.00e-05')
        >>> format_number(0.019, signed=True)
        '+0.0190'
        >>> format_number(float("nan")), format_number(None)
        ('–', '–')
        >>> format_number(True), format_number("a")
        ('True', 'a')
    """
    if value is None:
        return MISSING
    if isinstance(value, str | bool):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return MISSING
    if math.isinf(number):
        return ("+" if signed and number > 0 else "") + ("inf" if number > 0 else "-inf")
    sign = "+" if signed and number > 0 else ""
    if number == 0:
        return "0"
    if isinstance(value, Integral) or (number.is_integer() and abs(number) >= 10 ** (digits - 1)):
        return sign + str(int(number))
    rounded = float(f"{number:.{digits - 1}e}")  # to significant digits (it may gain one: 9.996)
    magnitude = math.floor(math.log10(abs(rounded)))
    if magnitude < -4:
        text = f"{rounded:.{digits - 1}e}"
    elif magnitude >= digits - 1:
        text = str(int(round(number)))  # whole digits are never dropped
    else:
        text = f"{rounded:.{digits - 1 - magnitude}f}"
    if text.lstrip("-").strip("0.") == "":  # nothing but zeros left: no sign on it
        return "0"
    return sign + text


def format_interval(low: Any, high: Any, digits: int = DIGITS) -> str:
    """`[low, high]`, each as format_number prints it; empty where either end is missing, and
    `(no interval)` where it is all reals (a test with too few units rejects nothing: the
    table's note says how few).

    Examples:
        >>> format_interval(0.0412, 0.07306), format_interval(float("nan"), 1.0)
        ('[0.0412, 0.0731]', '')
        >>> format_interval(-math.inf, math.inf)
        '(no interval)'
    """
    ends = [format_number(low, digits), format_number(high, digits)]
    if MISSING in ends:
        return ""
    return "(no interval)" if ends == ["-inf", "inf"] else f"[{ends[0]}, {ends[1]}]"


def with_interval(
    value: Any, low: Any, high: Any, digits: int = DIGITS, *, signed: bool = False
) -> str:
    """A value and its interval in one cell: `0.0572 [0.0412, 0.0731]`.

    Examples:
        >>> with_interval(0.05719, 0.0412, 0.07306), with_interval(0.5, None, None)
        ('0.0572 [0.0412, 0.0731]', '0.500')
    """
    interval = format_interval(low, high, digits)
    shown = format_number(value, digits, signed=signed)
    return f"{shown} {interval}" if interval else shown


def counted(n: int, one: str, many: str) -> str:
    """A count with its noun, singular for one.

    Examples:
        >>> counted(1, "property", "properties"), counted(2, "property", "properties")
        ('1 property', '2 properties')
    """
    return f"{n} {one if n == 1 else many}"
