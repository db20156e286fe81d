"""CPython versions of the eval_bench algorithms, two of each.

Shaped like Soil: the bottom-up merge sort of examples/csvstats/_private.soil
(passes as a fold, each merge a left fold over indices with an (out, i, j)
state tuple and Option-returning `get`) and a naive doubly recursive fib.

Idiomatic: the merge sort and fib a Python programmer would write (a plain
recursive merge sort with slices and appends; the same naive fib, which is
already idiomatic, timed again under its own name so the report pairs every
Soil figure with an idiomatic one).

Prints one line per benchmark: `name best-seconds ...` for `sort`, `fib`,
`sort_idiomatic` and `fib_idiomatic` (the best of `reps` runs; arguments: sort
size, fib argument, sort reps, and optionally fib reps, which default to the
sort reps)."""

import sys
import time
from functools import reduce

sys.setrecursionlimit(100000)


def get(xs, i):
    return (xs[i],) if 0 <= i < len(xs) else None


def merge(goes_first, xs, ys):
    def step(state, _):
        out, i, j = state
        a, b = get(xs, i), get(ys, j)
        if a is not None and b is not None:
            if goes_first(a[0], b[0]):
                out.append(a[0])
                return (out, i + 1, j)
            out.append(b[0])
            return (out, i, j + 1)
        if a is not None:
            out.append(a[0])
            return (out, i + 1, j)
        if b is not None:
            out.append(b[0])
            return (out, i, j + 1)
        return (out, i, j)

    merged, _, _ = reduce(step, range(0, len(xs) + len(ys)), ([], 0, 0))
    return merged


def merge_pairs(goes_first, runs):
    def merge_at(i):
        left, right = get(runs, 2 * i), get(runs, 2 * i + 1)
        if left is not None and right is not None:
            return merge(goes_first, left[0], right[0])
        if left is not None:
            return left[0]
        return []

    return list(map(merge_at, range(0, (len(runs) + 1) // 2)))


def merge_sort(goes_first, xs):
    def pass_(runs, _):
        return runs if len(runs) <= 1 else merge_pairs(goes_first, runs)

    sorted_runs = reduce(pass_, range(0, 64), list(map(lambda x: [x], xs)))
    return sorted_runs[0] if sorted_runs else []


def sort(xs):
    return merge_sort(lambda a, b: a <= b, xs)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def merge_sort_idiomatic(xs):
    if len(xs) <= 1:
        return xs
    middle = len(xs) // 2
    left = merge_sort_idiomatic(xs[:middle])
    right = merge_sort_idiomatic(xs[middle:])
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def fib_idiomatic(n):
    if n < 2:
        return n
    return fib_idiomatic(n - 1) + fib_idiomatic(n - 2)


def lcg_floats(n):
    state = 12345
    out = []
    for _ in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append((state >> 11) / float(1 << 53) * 1000.0 - 500.0)
    return out


def best_of(reps, job):
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        result = job()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    n, fib_n, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    fib_reps = int(sys.argv[4]) if len(sys.argv) > 4 else reps
    xs = lcg_floats(n)
    seconds, result = best_of(reps, lambda: sort(xs))
    print("sort", seconds, result[0], result[-1])
    seconds, value = best_of(fib_reps, lambda: fib(fib_n))
    print("fib", seconds, value)
    seconds, result = best_of(reps, lambda: merge_sort_idiomatic(xs))
    print("sort_idiomatic", seconds, result[0], result[-1])
    seconds, value = best_of(fib_reps, lambda: fib_idiomatic(fib_n))
    print("fib_idiomatic", seconds, value)


main()
