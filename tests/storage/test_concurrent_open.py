"""Several processes opening one database at once (a serve and its workers starting together)."""

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
app = App(Settings(data_dir=sys.argv[1]))
app.store.jobs.counts()   # migrated, seed sources refreshed
app.close()
"""


# Twelve processes that each import the App: 146 s was seen on 2 cores shared with a parallel run.
@pytest.mark.timeout(600)
def test_processes_opening_a_new_database_together_all_succeed(tmp_path: Path) -> None:
    env = {**os.environ, "FACTBOT_MODEL__MODE": "none"}
    for round_no in range(3):
        data = tmp_path / f"round{round_no}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN, str(data)],
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
