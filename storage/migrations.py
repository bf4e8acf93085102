"""Named schema migrations, applied in order whenever a store is opened."""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("factbot")


@migrations()
def m001_posts_and_checks(db: Database) -> None:
    db.execute("""
        CREATE TABLE posts (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            platform_id TEXT NOT NULL,
            url TEXT,
            author TEXT,
            created_at TEXT,
            text TEXT NOT NULL,
            links TEXT NOT NULL DEFAULT '[]',
            image_refs TEXT NOT NULL DEFAULT '[]',
            language TEXT,
            UNIQUE (platform, platform_id)
        )""")
    db.execute("""
        CREATE TABLE checks (
            id TEXT PRIMARY KEY,
            post_id TEXT NOT NULL REFERENCES posts(id),
            created_at TEXT NOT NULL,
            verdict TEXT NOT NULL,
            judge TEXT NOT NULL,
            before TEXT,
            correction TEXT NOT NULL,
            refs TEXT NOT NULL,
            timings TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX checks_post ON checks(post_id)")
    db.execute("""
        CREATE TABLE claims (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL REFERENCES checks(id),
            post_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            label TEXT NOT NULL,
            rationale TEXT NOT NULL,
            evidence_ids TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX claims_check ON claims(check_id)")
    db.execute("""
        CREATE TABLE evidence (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL REFERENCES checks(id),
            claim_id TEXT NOT NULL,
            passage_id TEXT NOT NULL,
            passage_position INTEGER NOT NULL,
            passage_text TEXT NOT NULL,
            document_id TEXT NOT NULL,
            document_url TEXT NOT NULL,
            document_title TEXT NOT NULL,
            document_domain TEXT NOT NULL,
            document_published_at TEXT,
            relevance REAL NOT NULL,
            tier TEXT NOT NULL,
            stance TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX evidence_check ON evidence(check_id)")


@migrations()
def m002_evidence_index(db: Database) -> None:
    db.execute("""
        CREATE TABLE documents (
            id TEXT PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            domain TEXT NOT NULL,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            published_at TEXT,
            fetched_at TEXT,
            publisher TEXT,
            content_hash TEXT NOT NULL,
            claim_review TEXT,
            extra TEXT NOT NULL DEFAULT '{}',
            ingested_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX documents_domain ON documents(domain)")
    db.execute("CREATE INDEX documents_hash ON documents(content_hash)")
    db.execute("""
        CREATE TABLE passages (
            id INTEGER PRIMARY KEY,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            embedding BLOB NOT NULL
        )""")
    db.execute("CREATE INDEX passages_document ON passages(document_id)")
    db.execute(
        "CREATE VIRTUAL TABLE passages_fts USING fts5("
        "text, content='passages', content_rowid='id', tokenize='porter unicode61')"
    )
    db.execute("""
        CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts(rowid, text) VALUES (new.id, new.text);
        END""")
    db.execute("""
        CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
            INSERT INTO passages_fts(passages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END""")


@migrations()
def m003_sources(db: Database) -> None:
    db.execute("""
        CREATE TABLE sources (
            domain TEXT PRIMARY KEY,
            tier TEXT NOT NULL,
            reason TEXT NOT NULL,
            origin TEXT NOT NULL,
            details TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL
        )""")


@migrations()
def m004_jobs(db: Database) -> None:
    db.execute("""
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            dedupe_key TEXT UNIQUE,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            result_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            run_after TEXT
        )""")
    db.execute("CREATE INDEX jobs_status ON jobs(status, run_after)")


@migrations()
def m005_web_caches(db: Database) -> None:
    db.execute("""
        CREATE TABLE search_cache (
            key TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            query TEXT NOT NULL,
            before TEXT,
            results TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE page_cache (
            url TEXT PRIMARY KEY,
            final_url TEXT NOT NULL,
            status INTEGER NOT NULL,
            content_type TEXT NOT NULL,
            charset TEXT,
            body BLOB NOT NULL,
            redirects TEXT NOT NULL,
            fetched_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE url_checks (
            url TEXT PRIMARY KEY,
            reachable INTEGER NOT NULL,
            reason TEXT NOT NULL,
            checked_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )""")


@migrations()
def m006_model_usage(db: Database) -> None:
    db.execute("ALTER TABLE checks ADD COLUMN usage TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m007_claim_shown(db: Database) -> None:
    db.execute("ALTER TABLE claims ADD COLUMN shown INTEGER NOT NULL DEFAULT 1")


@migrations()
def m008_job_runtime(db: Database) -> None:
    # Leases and heartbeats replace "running until someone requeues it"; 'failed' becomes 'dead'.
    for column in (
        "max_attempts INTEGER NOT NULL DEFAULT 3",
        "post_id TEXT",
        "lease_owner TEXT",
        "lease_expires_at TEXT",
        "started_at TEXT",
        "finished_at TEXT",
    ):
        db.execute(f"ALTER TABLE jobs ADD COLUMN {column}")
    db.execute("UPDATE jobs SET status = 'dead' WHERE status = 'failed'")
    db.execute("UPDATE jobs SET status = 'queued' WHERE status = 'running'")
    db.execute("CREATE INDEX jobs_lease ON jobs(status, lease_expires_at)")
    db.execute("CREATE INDEX jobs_created ON jobs(created_at)")
    # A check's id is known when its job is queued: the API finds the job by it.
    db.execute("CREATE INDEX jobs_check ON jobs(json_extract(payload, '$.check_id'))")
    db.execute("""
        CREATE TABLE job_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            stage TEXT NOT NULL,
            status TEXT NOT NULL,
            at TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '{}'
        )""")
    db.execute("CREATE INDEX job_events_job ON job_events(job_id, seq)")
    # One reply per (platform, target post, kind), reserved before the platform call.
    db.execute("""
        CREATE TABLE replies (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            target_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            check_id TEXT,
            job_id TEXT,
            status TEXT NOT NULL,
            platform_reply_id TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (platform, target_id, kind)
        )""")
    db.execute("""
        CREATE TABLE workers (
            id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            started_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            stopped_at TEXT
        )""")


@migrations()
def m009_structured_correction(db: Database) -> None:
    # NULL for checks stored before corrections were structured: they load as headline-only.
    db.execute("ALTER TABLE checks ADD COLUMN correction_items TEXT")


@migrations()
def m010_reuse_fingerprints(db: Database) -> None:
    # One row a finished check: what a new post is compared with before a check is enqueued.
    # No foreign key to checks: fingerprints are pruned on their own schedule (by created_at).
    db.execute("""
        CREATE TABLE reuse_fingerprints (
            seq INTEGER PRIMARY KEY,
            check_id TEXT NOT NULL UNIQUE,
            platform TEXT NOT NULL,
            platform_id TEXT NOT NULL,
            text_hash TEXT,
            claims_hash TEXT,
            numbers TEXT NOT NULL DEFAULT '',
            before TEXT,
            bound_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            model TEXT NOT NULL,
            embedding BLOB
        )""")
    db.execute("CREATE INDEX reuse_post ON reuse_fingerprints(platform, platform_id)")
    db.execute("CREATE INDEX reuse_text ON reuse_fingerprints(text_hash)")
    db.execute("CREATE INDEX reuse_claims ON reuse_fingerprints(claims_hash)")
    db.execute("CREATE INDEX reuse_created ON reuse_fingerprints(created_at)")


@migrations()
def m011_platform_requests(db: Database) -> None:
    # A job may wait for another to end (a reply job waits for its check job, done or dead).
    db.execute("ALTER TABLE jobs ADD COLUMN waits_for TEXT")
    db.execute("CREATE INDEX jobs_waits_for ON jobs(waits_for)")
    # Small durable state of adapters and the runtime: a command-definitions hash, cursors.
    db.execute("""
        CREATE TABLE kv (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    # Token buckets of the rate limits; they survive restarts. refused_at: when the one
    # friendly refusal of the current empty spell was sent.
    db.execute("""
        CREATE TABLE buckets (
            key TEXT PRIMARY KEY,
            tokens REAL NOT NULL,
            updated_at TEXT NOT NULL,
            refused_at TEXT
        )""")
    # One row a platform request that became a check: whose, where, at what cost; user ids are
    # pseudonyms unless the operator keeps raw ids. What budgets, retention and forget read.
    db.execute("""
        CREATE TABLE platform_requests (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            event_key TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            channel_id TEXT NOT NULL,
            requester TEXT NOT NULL,
            author TEXT,
            message_id TEXT,
            post_id TEXT,
            check_id TEXT,
            check_job_id TEXT,
            reply_job_id TEXT,
            cost_usd REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            redacted_at TEXT,
            UNIQUE (platform, event_key)
        )""")
    db.execute(
        "CREATE INDEX platform_requests_budget ON platform_requests(platform, workspace_id, "
        "created_at)"
    )
    db.execute("CREATE INDEX platform_requests_requester ON platform_requests(requester)")
    db.execute("CREATE INDEX platform_requests_channel ON platform_requests(platform, channel_id)")
    db.execute("CREATE INDEX platform_requests_created ON platform_requests(created_at)")
    # Users and channels that asked factbot to leave them alone.
    db.execute("""
        CREATE TABLE optouts (
            platform TEXT NOT NULL,
            scope TEXT NOT NULL,
            subject TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (platform, scope, subject)
        )""")


@migrations()
def m012_slack_installations(db: Database) -> None:
    # Slack workspaces that installed factbot through OAuth (multi-workspace mode). `data` is
    # the installation as Slack gave it (tokens included: the bot cannot post without them),
    # JSON; the key columns are what Bolt looks installations up by.
    db.execute("""
        CREATE TABLE slack_installations (
            enterprise_id TEXT NOT NULL,
            team_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            data TEXT NOT NULL,
            installed_at TEXT NOT NULL,
            PRIMARY KEY (enterprise_id, team_id, user_id)
        )""")
    # OAuth state values issued by the install page, each consumed once before it expires.
    db.execute("""
        CREATE TABLE slack_oauth_states (
            state TEXT PRIMARY KEY,
            expires_at TEXT NOT NULL
        )""")


@migrations()
def m013_image_index(db: Database) -> None:
    # Images seen on pages (ingested pages, earlier checks): one row per image and page, with
    # the perceptual hashes (hex) that find it again, for image provenance.
    db.execute("""
        CREATE TABLE image_index (
            image_id TEXT NOT NULL,
            image_url TEXT NOT NULL,
            page_url TEXT NOT NULL,
            publisher TEXT,
            published_at TEXT,
            caption TEXT NOT NULL DEFAULT '',
            phash TEXT NOT NULL,
            phash_core TEXT NOT NULL,
            windows TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            UNIQUE (image_id, page_url)
        )""")
    db.execute("CREATE INDEX image_index_image ON image_index(image_id)")


@migrations()
def m014_claim_graphs(db: Database) -> None:
    # Instruction-like text found in the post or its pages (JSON list of Injection), and each
    # claim's graph verification (JSON list of ClaimGraph): verified, conflicted, unmatched.
    db.execute("ALTER TABLE checks ADD COLUMN injections TEXT NOT NULL DEFAULT '[]'")
    db.execute("ALTER TABLE checks ADD COLUMN graphs TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m019_search_status(db: Database) -> None:
    # Which evidence sources a check reached (JSON SearchStatus): live search off, ok, partial
    # or unreachable, each provider's failure, and the local index's size when it began.
    db.execute("ALTER TABLE checks ADD COLUMN search_status TEXT NOT NULL DEFAULT '{}'")
