"""Several processes opening one database at once (a serve and its workers starting together).

On PostgreSQL each process is a node with its own data folder, opening one new database.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

OPEN = """
import sys
from bots.app.root import App
from bots.settings import Settings
url = sys.argv[2] or None
app = App(Settings(data_dir=sys.argv[1], database_url=url))
app.store.jobs.counts()   # migrated, seed sources refreshed
app.close()
"""


# Eight processes that each import the App (twelve took 146 s on 2 cores beside a parallel run).
@pytest.mark.timeout(600)
@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_processes_opening_a_new_database_together_all_succeed(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    env = {**os.environ, "FACTBOT_MODEL__MODE": "none"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2]), env.get("PYTHONPATH", "")])
    server = request.getfixturevalue("postgres_server") if engine == "postgres" else None
    for round_no in range(2):
        url = server.fresh_database() if server is not None else ""
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    OPEN,
                    str(tmp_path / f"round{round_no}" / (f"node{n}" if url else "shared")),
                    url,
                ],
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(4)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
