"""The CPython side of wordcount_bench: the ten most common words of a text
file, as a Python programmer writes it (`Counter(text.split()).most_common`).

Usage: wordcount.py TEXT-FILE N. Prints the top N as compact JSON
`[["word",count],...]` on stdout and this process's peak resident set
(VmHWM, in kB) as `peak_kb N` and its CPU time as `cpu_seconds S` on
stderr, the figures the Soil side reports the same way."""

import json
import resource
import sys
from collections import Counter


def peak_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as f:
        text = f.read()
    top = Counter(text.split()).most_common(n)
    print(json.dumps(top, separators=(",", ":")))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"peak_kb {peak_kb()}", file=sys.stderr)
    print(f"cpu_seconds {usage.ru_utime + usage.ru_stime}", file=sys.stderr)


main()
