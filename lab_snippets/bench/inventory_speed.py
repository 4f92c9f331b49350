"""Benchmark the source inventory scanner.

    python -m lab_snippets.bench.inventory_speed [PATH] [--commit C] [--repeat N]

Without PATH it scans ``$SLIME_SRC`` at the pinned commit. Reading the files (git or disk) happens
once, outside the timing; each round times parsing and scanning every file, and the median of the
rounds is printed. No test asserts on the figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from lab_snippets import inventory


def bench(path: Path, commit: str | None, repeat: int) -> tuple[int, list[float], float]:
    start = time.perf_counter()
    files, _ = inventory.source_files(path, commit)
    files = list(files)
    read_seconds = time.perf_counter() - start
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for rel, data in files:
            inventory.scan_source(data, rel)
        rounds.append(time.perf_counter() - t0)
    return len(files), rounds, read_seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.bench.inventory_speed")
    parser.add_argument("path", nargs="?", type=Path, help="tree to scan (default: $SLIME_SRC at the pin)")
    parser.add_argument("--commit", default=None)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        if args.path is None:
            path, commit = inventory.slime_src(), args.commit or inventory.pinned_commit()
        else:
            path, commit = args.path, args.commit
        n, rounds, read_seconds = bench(path, commit, max(1, args.repeat))
        # One full end-to-end run (read + scan + build) as a user would run it.
        t0 = time.perf_counter()
        inventory.scan_tree(path, commit)
        end_to_end = time.perf_counter() - t0
    except inventory.InventoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{n} .py files; reading them once: {read_seconds:.3f} s")
    print(f"scan median of {len(rounds)} rounds: {statistics.median(rounds):.3f} s "
          f"(min {min(rounds):.3f} s, max {max(rounds):.3f} s)")
    print(f"one end-to-end scan (read + scan + build): {end_to_end:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
