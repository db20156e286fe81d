"""The examples' `sort` properties (idempotent, order_free) under Hypothesis, for
comparison with the Soil-level runner: prints cases per second."""

import math
import sys
import time

from hypothesis import given, settings, strategies as st, HealthCheck


def total_key(x):
    if math.isnan(x):
        return (1, 0.0, 0.0)
    return (0, x, math.copysign(1.0, x))


def sort(xs):
    return sorted(xs, key=total_key)


def same(a, b):
    return [total_key(x) for x in a] == [total_key(x) for x in b]


CASES = [0]
floats = st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=24)


@settings(max_examples=128, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(floats)
def idempotent(xs):
    CASES[0] += 1
    assert same(sort(sort(xs)), sort(xs))


@settings(max_examples=128, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(floats)
def order_free(xs):
    CASES[0] += 1
    assert same(sort(list(reversed(xs))), sort(xs))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    started = time.perf_counter()
    for _ in range(rounds):
        idempotent()
        order_free()
    elapsed = time.perf_counter() - started
    print(f"{CASES[0]} {elapsed}")


if __name__ == "__main__":
    main()
