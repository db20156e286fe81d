"""Reference implementations for the csvstats module (the differential oracle).

Plain python3, no dependencies. Each function takes and returns the values a
Soil definition takes and returns, decoded from canonical JSON: F64 arrives as a
Python float.
"""

import math


def _total_order_key(x):
    """The F64 total order of Soil: -0.0 sorts before 0.0, NaN sorts last."""
    if math.isnan(x):
        return (1, 0.0, 0.0)
    return (0, x, math.copysign(1.0, x))


def _halfway(a, b):
    """The mean of two finite floats, correctly rounded and never overflowing."""
    total = a + b
    if math.isfinite(total):
        return total / 2.0
    return a / 2.0 + b / 2.0


def median(xs):
    """The middle value of a non-empty list of finite floats.

    For an even count it is the mean of the two middle values.
    """
    if not xs:
        raise ValueError("median of an empty list")
    s = sorted(xs, key=_total_order_key)
    n = len(s)
    if n % 2 == 1:
        return s[n // 2]
    return _halfway(s[n // 2 - 1], s[n // 2])


if __name__ == "__main__":
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert median([1.7976931348623157e308, 1.7976931348623157e308]) == 1.7976931348623157e308
    assert math.copysign(1.0, median([0.0, -0.0, 1.0])) == 1.0
    assert median([5e-324, 5e-324]) == 5e-324
    print("ok")
