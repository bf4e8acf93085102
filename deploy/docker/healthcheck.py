"""The image's health check: `factbot serve` answers GET /healthz; other commands are running.

Docker runs it inside the container; it reads the main process's command line (PID 1).
"""

import os
import sys
import urllib.request
from pathlib import Path

argv = Path("/proc/1/cmdline").read_bytes().split(b"\0")
if b"serve" in argv:
    port = os.environ.get("FACTBOT_SERVER__PORT", "8000")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=4) as answer:
            sys.exit(0 if answer.status == 200 else 1)
    except OSError as exc:
        print(f"unhealthy: {exc}")
        sys.exit(1)
sys.exit(0)  # worker, relay, migrate: Docker restarts the process if it dies
