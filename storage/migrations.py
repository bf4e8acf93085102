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
def m015_x_notes(db: Database) -> None:
    # What a platform's API itself costs (X bills every post read and written): one row a
    # billed call, counted with the checks' cost in the platform's money budget.
    db.execute("""
        CREATE TABLE api_costs (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            workspace_id TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            units INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            ref TEXT,
            at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX api_costs_platform_at ON api_costs(platform, workspace_id, at)")
    # Community Notes factbot wrote on X: one per post, the local admission scores, what the
    # API answered (its evaluation, the note id) and the note's later rating status.
    db.execute("""
        CREATE TABLE x_notes (
            id TEXT PRIMARY KEY,
            post_id TEXT NOT NULL UNIQUE,
            check_id TEXT,
            job_id TEXT,
            text TEXT NOT NULL,
            classification TEXT NOT NULL,
            misleading_tags TEXT NOT NULL DEFAULT '[]',
            trustworthy_sources INTEGER NOT NULL DEFAULT 1,
            urls TEXT NOT NULL DEFAULT '[]',
            url_validity TEXT NOT NULL,
            claim_opinion TEXT NOT NULL,
            harassment_abuse TEXT NOT NULL,
            score_detail TEXT NOT NULL DEFAULT '{}',
            test_mode INTEGER NOT NULL DEFAULT 1,
            status TEXT NOT NULL,
            api_note_id TEXT,
            claim_opinion_score REAL,
            rating_status TEXT,
            evaluation TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX x_notes_created ON x_notes(created_at)")


@migrations()
def m016_review_queue(db: Database) -> None:
    # Corrections proposed for a human's decision (bots.runtime.review.proposals). `destination`
    # is the public routing of the reply; `private` what only the reply may use (deleted once posted
    # or rejected). `text` is the proposed correction as plain text, written once the check
    # has ended; `card_*` the message that shows it in the review channel.
    db.execute("""
        CREATE TABLE review_proposals (
            id TEXT PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            check_id TEXT NOT NULL,
            check_job_id TEXT,
            platform TEXT NOT NULL,
            destination TEXT NOT NULL,
            private TEXT NOT NULL DEFAULT '{}',
            reason TEXT NOT NULL,
            text TEXT,
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                ('pending', 'approved', 'rejected', 'posted', 'failed', 'expired')),
            reply_job_id TEXT,
            card_job_id TEXT,
            card_platform TEXT,
            card_message_id TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX review_proposals_status ON review_proposals(status, created_at)")
    db.execute("CREATE INDEX review_proposals_check ON review_proposals(check_id)")
    # One decision a proposal, whoever clicks first: the UNIQUE proposal_id is the guarantee.
    db.execute("""
        CREATE TABLE review_decisions (
            id TEXT PRIMARY KEY,
            proposal_id TEXT NOT NULL UNIQUE REFERENCES review_proposals(id),
            action TEXT NOT NULL CHECK (action IN ('approve', 'edit', 'reject')),
            reviewer TEXT NOT NULL,
            text TEXT,
            reason TEXT NOT NULL DEFAULT '',
            at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX review_decisions_at ON review_decisions(at)")


@migrations()
def m017_monitor(db: Database) -> None:
    # The proactive monitor's scheduler lease: the one process holding an unexpired row runs
    # the schedule; any other stands by and takes it over once `expires_at` has passed.
    db.execute("""
        CREATE TABLE monitor_lease (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            renewed_at TEXT NOT NULL
        )""")
    # Every post a monitor source found, once (UNIQUE platform + post id): its score and what
    # became of it — checked, answered from a stored check, or skipped (budget, score, author)
    # and kept. `post` and `destination` are JSON, so a skipped candidate can still be checked.
    db.execute("""
        CREATE TABLE monitor_candidates (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            post_id TEXT NOT NULL,
            source TEXT NOT NULL,
            thread_key TEXT NOT NULL,
            author TEXT,
            workspace_id TEXT NOT NULL,
            channel_id TEXT NOT NULL,
            mentions_bot INTEGER NOT NULL DEFAULT 0,
            score REAL NOT NULL,
            parts TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            post TEXT NOT NULL,
            destination TEXT NOT NULL,
            check_id TEXT,
            check_job_id TEXT,
            route_job_id TEXT,
            cost_usd REAL,
            outcome TEXT,
            created_at TEXT NOT NULL,
            routed_at TEXT,
            UNIQUE (platform, post_id)
        )""")
    db.execute("CREATE INDEX monitor_candidates_created ON monitor_candidates(created_at)")
    # What the monitor did in a thread: one row per (platform, thread, action), so a thread is
    # answered at most once whatever restarts or second schedulers do.
    db.execute("""
        CREATE TABLE monitor_actions (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            thread_key TEXT NOT NULL,
            action TEXT NOT NULL,
            route TEXT NOT NULL,
            candidate_id TEXT NOT NULL,
            author TEXT,
            job_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (platform, thread_key, action)
        )""")
    db.execute(
        "CREATE INDEX monitor_actions_author ON monitor_actions(platform, author, created_at)"
    )


@migrations()
def m018_dashboard(db: Database) -> None:
    # Operators of the web dashboard: a name, a role and an argon2 password hash (never the
    # password). Sign-in attempts are kept to show an admin what was tried, and from where.
    db.execute("""
        CREATE TABLE users (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL CHECK (role IN ('viewer', 'reviewer', 'admin')),
            password_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            disabled INTEGER NOT NULL DEFAULT 0
        )""")
    db.execute("""
        CREATE TABLE login_attempts (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            address TEXT NOT NULL,
            ok INTEGER NOT NULL,
            at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX login_attempts_at ON login_attempts(at)")
    # The checks list filters and orders by these; a check page looks up where it was posted.
    db.execute("CREATE INDEX checks_created ON checks(created_at)")
    db.execute("CREATE INDEX checks_verdict ON checks(verdict, created_at)")
    db.execute("CREATE INDEX checks_judge ON checks(judge, created_at)")
    db.execute("CREATE INDEX posts_platform ON posts(platform)")
    db.execute("CREATE INDEX platform_requests_check ON platform_requests(check_id)")
    db.execute("CREATE INDEX replies_check ON replies(check_id)")
    # Full-text search over post text and claims. Row ids encode the check: a check's rowid
    # times 1024, plus 0 for its post text or 1 + position for a claim, so a check's rows are
    # one rowid range (deleted and replaced in O(log n), where an UNINDEXED column would scan).
    db.execute("CREATE VIRTUAL TABLE check_text USING fts5(body, tokenize = 'unicode61')")
    db.execute("""
        CREATE TRIGGER check_text_check AFTER INSERT ON checks BEGIN
            INSERT INTO check_text (rowid, body)
                SELECT NEW.rowid * 1024, text FROM posts WHERE id = NEW.post_id AND text != '';
        END""")
    db.execute("""
        CREATE TRIGGER check_text_claim AFTER INSERT ON claims WHEN NEW.text != '' BEGIN
            INSERT INTO check_text (rowid, body)
                SELECT c.rowid * 1024 + 1 + min(NEW.position, 1022), NEW.text
                FROM checks AS c WHERE c.id = NEW.check_id;
        END""")
    db.execute("""
        CREATE TRIGGER check_text_claim_text AFTER UPDATE OF text ON claims BEGIN
            DELETE FROM check_text WHERE rowid = (
                SELECT c.rowid * 1024 + 1 + min(NEW.position, 1022)
                FROM checks AS c WHERE c.id = NEW.check_id);
            INSERT INTO check_text (rowid, body)
                SELECT c.rowid * 1024 + 1 + min(NEW.position, 1022), NEW.text
                FROM checks AS c WHERE c.id = NEW.check_id AND NEW.text != '';
        END""")
    db.execute("""
        CREATE TRIGGER check_text_post_text AFTER UPDATE OF text ON posts BEGIN
            DELETE FROM check_text WHERE rowid IN (
                SELECT c.rowid * 1024 FROM checks AS c WHERE c.post_id = NEW.id);
            INSERT INTO check_text (rowid, body)
                SELECT c.rowid * 1024, NEW.text FROM checks AS c
                WHERE c.post_id = NEW.id AND NEW.text != '';
        END""")
    db.execute("""
        CREATE TRIGGER check_text_gone AFTER DELETE ON checks BEGIN
            DELETE FROM check_text
                WHERE rowid BETWEEN OLD.rowid * 1024 AND OLD.rowid * 1024 + 1023;
        END""")
    db.execute("""
        INSERT INTO check_text (rowid, body)
            SELECT c.rowid * 1024, p.text FROM checks AS c JOIN posts AS p ON p.id = c.post_id
            WHERE p.text != ''""")
    db.execute("""
        INSERT INTO check_text (rowid, body)
            SELECT c.rowid * 1024 + 1 + min(cl.position, 1022), cl.text
            FROM claims AS cl JOIN checks AS c ON c.id = cl.check_id WHERE cl.text != ''""")


@migrations()
def m019_search_status(db: Database) -> None:
    # Which evidence sources a check reached (JSON SearchStatus): live search off, ok, partial
    # or unreachable, each provider's failure, and the local index's size when it began.
    db.execute("ALTER TABLE checks ADD COLUMN search_status TEXT NOT NULL DEFAULT '{}'")


@migrations()
def m020_check_details(db: Database) -> None:
    # What a check page shows and older checks lost: how each claim was decided (a Basis
    # value), the narratives the model judge read and its assessment of each (JSON), and the
    # image report (JSON of the dataclass, read back field by field; see storage/details.py).
    db.execute("ALTER TABLE claims ADD COLUMN basis TEXT NOT NULL DEFAULT 'unknown'")
    db.execute("ALTER TABLE checks ADD COLUMN narratives TEXT NOT NULL DEFAULT '[]'")
    db.execute("ALTER TABLE checks ADD COLUMN assessments TEXT NOT NULL DEFAULT '[]'")
    db.execute("ALTER TABLE checks ADD COLUMN images TEXT NOT NULL DEFAULT '{}'")
    # Invited sign-in links (`factbot users invite`): only the sha256 of the one-time token is
    # kept; following the link before it expires sets the user's password, once.
    db.execute("""
        CREATE TABLE invites (
            token_hash TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('viewer', 'reviewer', 'admin')),
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT
        )""")


@migrations()
def m021_face_gallery(db: Database) -> None:
    # Known public figures the operator imported (`factbot faces import`): one row per photo,
    # its face's 128-d embedding as little-endian float32. A post's faces are never stored.
    db.execute("""
        CREATE TABLE face_gallery (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            source_file TEXT NOT NULL,
            file_sha256 TEXT NOT NULL,
            box TEXT NOT NULL,
            embedding BLOB NOT NULL,
            imported_at TEXT NOT NULL,
            UNIQUE (name, file_sha256)
        )""")
    db.execute("CREATE INDEX face_gallery_name ON face_gallery(name)")


@migrations()
def m022_image_tight_hash(db: Database) -> None:
    # The pHash of a picture trimmed with a tight tolerance (a frame around a white-edged photo);
    # rows kept before have none and are matched on their other hashes.
    db.execute("ALTER TABLE image_index ADD COLUMN phash_tight TEXT NOT NULL DEFAULT ''")


@migrations()
def m023_evidence_image(db: Database) -> None:
    # An image-provenance evidence item's trace (JSON of ImageTrace): the earlier copy of the
    # post's picture, its date, caption and the conflict found; NULL for every other item.
    db.execute("ALTER TABLE evidence ADD COLUMN image TEXT")


@migrations()
def m024_check_quotes(db: Database) -> None:
    # Every quote the extraction stage kept for a check (JSON of Quote: evidence id, verbatim
    # text, stance), shown in the reply or not: what the verdict rules read. Older checks: [].
    db.execute("ALTER TABLE checks ADD COLUMN quotes TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m025_claim_language(db: Database) -> None:
    # Each claim's language (ISO 639-1, zh-Hans/zh-Hant, or und; pipeline/inputs/language.py):
    # a post may mix languages. Claims stored before have none (NULL).
    db.execute("ALTER TABLE claims ADD COLUMN language TEXT")


# What posts stored before kinds were (platform "web" was the dashboard and a page request,
# "api" the HTTP API, "cli" the command line) ask for; every other post is a platform's.
BACKFILL_KINDS = (
    "UPDATE posts SET kind = 'page' WHERE platform = 'web' AND url IS NOT NULL AND text = url "
    "AND links = '[\"' || url || '\"]'",
    "UPDATE posts SET kind = CASE WHEN text = '' THEN 'image' ELSE 'text' END "
    "WHERE kind = 'post' AND platform IN ('web', 'api', 'cli')",
)


@migrations()
def m026_post_kind(db: Database) -> None:
    # What a request asks to have checked (pipeline.records.domain.PostKind): a field of its
    # own, where a page request used to be recognised by the shape of its post.
    db.execute(
        "ALTER TABLE posts ADD COLUMN kind TEXT NOT NULL DEFAULT 'post' "
        "CHECK (kind IN ('post', 'text', 'image', 'page'))"
    )
    for statement in BACKFILL_KINDS:
        db.execute(statement)


@migrations()
def m027_posts_language_index(db: Database) -> None:
    # The dashboard filters checks by their post's language and lists the languages that
    # occur by skipping through this index (storage/browse.py `choices`).
    db.execute("CREATE INDEX posts_language ON posts(language)")


@migrations()
def m028_passages_trigram(db: Database) -> None:
    # The evidence index's second full-text table, for scripts written without spaces between
    # words (Chinese, Japanese, Thai) and for Korean's particles: unicode61 makes a whole run
    # of Han or Thai one token, which only an identical run matches. The trigram tokenizer
    # indexes every three characters, so a claim's own three-character pieces find a passage
    # that shares them (pipeline/claims/queries.py builds that query). Every passage is
    # indexed: a script's run may sit inside a Latin page. Per node, as the evidence index is.
    db.execute(
        "CREATE VIRTUAL TABLE passages_trigram USING fts5("
        "text, content='passages', content_rowid='id', tokenize='trigram')"
    )
    db.execute("INSERT INTO passages_trigram(passages_trigram) VALUES ('rebuild')")
    db.execute("""
        CREATE TRIGGER passages_trigram_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_trigram(rowid, text) VALUES (new.id, new.text);
        END""")
    db.execute("""
        CREATE TRIGGER passages_trigram_ad AFTER DELETE ON passages BEGIN
            INSERT INTO passages_trigram(passages_trigram, rowid, text)
                VALUES ('delete', old.id, old.text);
        END""")


@migrations()
def m029_fact_checks(db: Database) -> None:
    # The operator's fact-check index (pipeline/factchecks, issue 50): one row a published
    # review, keyed by its URL, with one vector per embedding model in fact_check_vectors.
    # `revision` is the index's change counter (each write's batch takes the next one), so
    # `FactCheckRepo.fact_check_key` is MAX(revision) on this index and a counter in kv.
    db.execute("""
        CREATE TABLE fact_checks (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            claim_reviewed TEXT NOT NULL,
            publisher TEXT NOT NULL,
            publisher_site TEXT,
            headline TEXT NOT NULL DEFAULT '',
            claimant TEXT,
            claim_date TEXT,
            review_date TEXT,
            language TEXT,
            rating TEXT,
            label TEXT,
            license TEXT,
            content_hash TEXT NOT NULL,
            revision INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX fact_checks_revision ON fact_checks(revision)")
    db.execute("CREATE INDEX fact_checks_publisher ON fact_checks(publisher)")
    db.execute("CREATE INDEX fact_checks_language ON fact_checks(language)")
    db.execute("""
        CREATE TABLE fact_check_vectors (
            fact_check_id INTEGER NOT NULL REFERENCES fact_checks(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (fact_check_id, model)
        )""")
    db.execute("CREATE INDEX fact_check_vectors_model ON fact_check_vectors(model)")
    # The dashboard's and the CLI's search of the index: an external-content FTS5 table kept in
    # step by triggers (PostgreSQL: a tsvector table, storage/pg_migrations.py).
    db.execute(
        "CREATE VIRTUAL TABLE fact_check_text USING fts5("
        "claim_reviewed, headline, claimant, publisher, content='fact_checks', content_rowid='id')"
    )
    db.execute("""
        CREATE TRIGGER fact_check_text_ai AFTER INSERT ON fact_checks BEGIN
            INSERT INTO fact_check_text(rowid, claim_reviewed, headline, claimant, publisher)
                VALUES (new.id, new.claim_reviewed, new.headline, new.claimant, new.publisher);
        END""")
    db.execute("""
        CREATE TRIGGER fact_check_text_ad AFTER DELETE ON fact_checks BEGIN
            INSERT INTO fact_check_text(
                fact_check_text, rowid, claim_reviewed, headline, claimant, publisher)
                VALUES ('delete', old.id, old.claim_reviewed, old.headline, old.claimant,
                        old.publisher);
        END""")
    db.execute("""
        CREATE TRIGGER fact_check_text_au AFTER UPDATE ON fact_checks BEGIN
            INSERT INTO fact_check_text(
                fact_check_text, rowid, claim_reviewed, headline, claimant, publisher)
                VALUES ('delete', old.id, old.claim_reviewed, old.headline, old.claimant,
                        old.publisher);
            INSERT INTO fact_check_text(rowid, claim_reviewed, headline, claimant, publisher)
                VALUES (new.id, new.claim_reviewed, new.headline, new.claimant, new.publisher);
        END""")


@migrations()
def m030_check_fact_checks(db: Database) -> None:
    # The published fact-check matched to each claim of a check (JSON of ClaimMatch: the
    # review, its scores, accepted or not; pipeline/checking/published.py). Older checks: [].
    db.execute("ALTER TABLE checks ADD COLUMN fact_checks TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m031_post_leads(db: Database) -> None:
    # Pages a third party suggested as evidence about the post (Post.leads, a JSON list of
    # URLs: X's Community Note requesters, the API's and the CLI's `leads`); older posts: [].
    db.execute("ALTER TABLE posts ADD COLUMN leads TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m032_fact_check_hashes(db: Database) -> None:
    # A review's content hash no longer names the embedding models (a model's vectors can be
    # filled in by a later pass, pipeline/factchecks/loading.py `embed_missing`): the stored
    # hashes of the old format are rewritten, so the next import does not embed every review
    # again. The search table's update trigger fires on its own columns only, so rewriting a
    # hash (or any other column) does not rewrite the review's FTS row.
    from storage.factchecks import rehash_fact_checks

    db.execute("DROP TRIGGER fact_check_text_au")
    db.execute("""
        CREATE TRIGGER fact_check_text_au
        AFTER UPDATE OF claim_reviewed, headline, claimant, publisher ON fact_checks BEGIN
            INSERT INTO fact_check_text(
                fact_check_text, rowid, claim_reviewed, headline, claimant, publisher)
                VALUES ('delete', old.id, old.claim_reviewed, old.headline, old.claimant,
                        old.publisher);
            INSERT INTO fact_check_text(rowid, claim_reviewed, headline, claimant, publisher)
                VALUES (new.id, new.claim_reviewed, new.headline, new.claimant, new.publisher);
        END""")
    rehash_fact_checks(db)
