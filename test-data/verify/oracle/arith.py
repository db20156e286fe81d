"""Reference functions for the differential-oracle tests."""

import os
import sys
import time


def add(a, b):
    return a + b


def add_wrong(a, b):
    # Off by one whenever the sum is positive.
    return a + b + (1 if a + b > 0 else 0)


def divide(a, b):
    return a // b


def as_set(a, b):
    # A set has no JSON form.
    return {a, b}


def as_text(a, b):
    return str(a + b)


def hang(a, b):
    time.sleep(60)
    return a + b


def chatty(a, b):
    print("noise on stdout")
    return a + b


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


class Nested:
    @staticmethod
    def twice(a, b):
        return 2 * (a + b)


def shape_sum(shape):
    # Dot carries a point under "value"; Span's fields sit beside "tag".
    fields = shape["value"] if shape["tag"] == "Dot" else shape
    if not all(isinstance(fields[k], float) for k in ("x", "y")):
        raise TypeError("coordinates must arrive as floats")
    return fields["x"] + fields["y"]


def exits_on_four(a, b):
    # Ends the whole process mid-run: later cases get no answer.
    if a + b == 4:
        print("leaving at 4")
        sys.stdout.flush()
        os._exit(4)
    return a + b
