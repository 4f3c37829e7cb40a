"""The ledger's schema, as numbered migrations applied in order and recorded in ``PRAGMA
user_version`` (see :class:`fastbmrag.store.ledger.Ledger`). Never edit a released migration:
append a new one."""

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """CREATE TABLE papers (
                paper_id TEXT PRIMARY KEY,
                status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
                content_hash TEXT,
                n_edges INTEGER NOT NULL DEFAULT 0,
                error TEXT,
                updated_at TEXT NOT NULL
            )""",
            "CREATE INDEX papers_status ON papers (status)",
            """CREATE TABLE edges (
                point_id TEXT PRIMARY KEY,
                paper_id TEXT NOT NULL,
                source_key TEXT NOT NULL,
                relationship_type TEXT NOT NULL,
                target_key TEXT NOT NULL
            )""",
            "CREATE INDEX edges_paper ON edges (paper_id)",
            """CREATE TABLE triples (
                source_key TEXT NOT NULL,
                relationship_type TEXT NOT NULL,
                target_key TEXT NOT NULL,
                n_papers INTEGER NOT NULL,
                PRIMARY KEY (source_key, relationship_type, target_key)
            ) WITHOUT ROWID""",
            """CREATE TABLE entities (
                key TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                ontology_id TEXT,
                degree INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE TABLE dirty_nodes (key TEXT PRIMARY KEY)",
            """CREATE TABLE journal (
                paper_id TEXT PRIMARY KEY,
                op TEXT NOT NULL CHECK (op IN ('commit', 'delete')),
                started_at TEXT NOT NULL
            )""",
            """CREATE TABLE runs (
                run_id INTEGER PRIMARY KEY AUTOINCREMENT,
                command TEXT NOT NULL,
                args TEXT NOT NULL DEFAULT '{}',
                pid INTEGER,
                started_at TEXT NOT NULL,
                ended_at TEXT,
                summary TEXT
            )""",
            """CREATE TABLE sync_state (
                query TEXT PRIMARY KEY,
                last_date TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                info TEXT NOT NULL DEFAULT '{}'
            )""",
        ],
    ),
    (
        2,
        [
            # the payload version each done paper's edges were stored with
            "ALTER TABLE papers ADD COLUMN payload_version INTEGER NOT NULL DEFAULT 1",
            # one name for the nodes whose degrees wait for a weight refresh: stale nodes
            "ALTER TABLE dirty_nodes RENAME TO stale_nodes",
        ],
    ),
    (
        3,
        [
            # papers known to be retracted, and who said so ("input": the paper's own record;
            # "pubmed": a sync's search); a retracted paper is kept, its edges flagged
            """CREATE TABLE retractions (
                paper_id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                noted_at TEXT NOT NULL
            )""",
        ],
    ),
    (
        4,
        [
            # degrees live here only: the store's points no longer carry them, so no node
            # waits for its edges' degree payload to be rewritten
            "DROP TABLE stale_nodes",
        ],
    ),
    (
        5,
        [
            # the names the papers wrote for each node ("NSCLC" for D002289), casefolded: the
            # first gazetteer of a question asked of the collection
            """CREATE TABLE names (
                form TEXT NOT NULL,
                key TEXT NOT NULL,
                PRIMARY KEY (form, key)
            ) WITHOUT ROWID""",
        ],
    ),
    (
        6,
        [
            # where a paper's ids came from, for papers with a PMID or PMCID: "pubtator" (NCBI's
            # PubTator3 annotations of it) or "not_yet" (not annotated yet: a later sync
            # re-grounds it), and the PubTator3 request that asks for it ("pmid:123")
            """CREATE TABLE grounding (
                paper_id TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                request TEXT NOT NULL,
                checked_at TEXT NOT NULL
            )""",
        ],
    ),
    (
        7,
        [
            # every query asks whether papers were stored by an earlier payload version (their
            # edges lack the names a question selects by): an index answers without a scan
            "CREATE INDEX papers_payload_version ON papers (payload_version)",
        ],
    ),
    (
        8,
        [
            # every change dated by run: the run that first added an edge and the one that last
            # wrote it (0: before runs were recorded), what each run did to each paper, and the
            # entities a collection's digest puts first
            "ALTER TABLE edges ADD COLUMN first_run INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE edges ADD COLUMN last_run INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX edges_first_run ON edges (first_run)",
            """CREATE TABLE paper_events (
                run_id INTEGER NOT NULL,
                paper_id TEXT NOT NULL,
                event TEXT NOT NULL CHECK (event IN ('indexed', 'reindexed', 'removed',
                                                     'retracted')),
                edges INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (run_id, paper_id, event)
            ) WITHOUT ROWID""",
            """CREATE TABLE watches (
                key TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                added_at TEXT NOT NULL
            )""",
        ],
    ),
    (
        9,
        [
            # each paper's study (papers.design): design, organisms (";"-joined) and where each
            # came from ("metadata", "model", "" unknown): filters, cards and status read them
            "ALTER TABLE papers ADD COLUMN design TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE papers ADD COLUMN organisms TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE papers ADD COLUMN design_from TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE papers ADD COLUMN organisms_from TEXT NOT NULL DEFAULT ''",
        ],
    ),
    (
        10,
        [
            # edges an earlier version stored before runs dated them (first_run 0): dated by
            # the last run that had started when their paper was last written, and their papers
            # and retractions given the events of those runs, so a digest of a run before the
            # upgrade lists them
            """UPDATE edges SET first_run = COALESCE((
                SELECT MAX(r.run_id) FROM runs r JOIN papers p ON p.paper_id = edges.paper_id
                WHERE r.started_at <= p.updated_at), 0) WHERE first_run = 0""",
            "UPDATE edges SET last_run = first_run WHERE last_run = 0",
            """INSERT OR IGNORE INTO paper_events (run_id, paper_id, event, edges)
                SELECT first_run, paper_id, 'indexed', COUNT(*) FROM edges
                WHERE first_run > 0 AND paper_id NOT IN (SELECT paper_id FROM paper_events)
                GROUP BY first_run, paper_id""",
            """INSERT OR IGNORE INTO paper_events (run_id, paper_id, event, edges)
                SELECT (SELECT MAX(r.run_id) FROM runs r WHERE r.started_at <= t.noted_at),
                       t.paper_id, 'retracted', 0 FROM retractions t
                WHERE (SELECT MAX(r.run_id) FROM runs r WHERE r.started_at <= t.noted_at)
                      IS NOT NULL
                  AND t.paper_id NOT IN (SELECT paper_id FROM paper_events
                                         WHERE event = 'retracted')""",
        ],
    ),
    (
        11,
        [
            # whether each edge is its paper's own finding or background it restates
            # (text.findings): consensus, contradictions, cards and the digest count papers by
            # findings; an edge stored before is counted as a finding, as it was
            "ALTER TABLE edges ADD COLUMN finding TEXT NOT NULL DEFAULT 'finding'",
        ],
    ),
]
