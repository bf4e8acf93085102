"""A throwaway PostgreSQL server for tests: initdb + pg_ctl on a temp dir and a free port.

Debian's `postgresql` package installs the binaries under /usr/lib/postgresql/<version>/bin
and does not start anything; this starts a private cluster (trust authentication, loopback,
fsync off: a test database needs no durability) and stops it at the end of the session. The
server refuses to run as root, so when the tests run as root (CI containers) the cluster is
created and started as the `postgres` system user the package made.

Each test gets its own database, copied from a template that is already migrated (a copy is
faster than applying the schema again); `fresh_database` gives an empty one.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

from storage.pg import PgDatabase
from storage.pg_migrations import apply

TEMPLATE = "factbot_template"


def find_bindir() -> Path | None:
    """Return the folder of PostgreSQL's server binaries, or None when it is not installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One private PostgreSQL cluster."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="factbot-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "factbot"
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, user="postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        self._names = itertools.count(1)
        self._template_ready = False

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as, *args], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> PostgresServer:
        """Create the cluster (first time) and start it; wait until it accepts connections."""
        if not self.data.exists():
            self._run(
                str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust",
                "-U", self.user, "--no-sync",
            )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
            "-l", str(self.root / "log"), "-w", "start",
        )  # fmt: skip
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (the cluster stays, `start` brings it back)."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        """Stop the server, then delete its files in the background.

        A session leaves hundreds of databases (gigabytes of copied files): deleting them
        held the end of each test worker for 5-10 s. The server is down before this returns;
        `rm`, started in the background, finishes the deleting after the worker has gone.
        """
        try:
            self.stop("immediate")
        finally:
            # sh starts rm in the background and returns at once: rm outlives this process
            subprocess.run(
                ["sh", "-c", 'rm -rf -- "$0" >/dev/null 2>&1 &', str(self.root)],
                check=False,
                start_new_session=True,
            )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def fresh_database(self) -> str:
        """Create an empty database; return its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE template0")
        return self.url(name)

    def migrated_database(self) -> str:
        """Create a database with factbot's schema applied; return its URL."""
        if not self._template_ready:
            self._template_ready = True
            self._admin(f"CREATE DATABASE {TEMPLATE} TEMPLATE template0")
            db = PgDatabase(self.url(TEMPLATE))
            try:
                apply(db)
            finally:
                db.close()
        name = f"t{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
        return self.url(name)
