"""A stand-in for `python -m llama_cpp.server --config_file FILE`: it loads for a while, then
answers `GET /v1/models` on the configured 127.0.0.1 port to requests with the configured key.

    python tests/pipeline/llm/fake_llama_server.py --config_file FILE [--load-seconds 0.6]
"""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


def main() -> None:
    """Sleep as a model load does, then serve the model list until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--config_file", required=True)
    parser.add_argument("--load-seconds", type=float, default=0.6)
    args = parser.parse_args()
    with open(args.config_file, encoding="utf-8") as file:
        config = json.load(file)
    time.sleep(args.load_seconds)  # not listening yet: probes fail to connect
    key = config["api_key"]
    alias = config["models"][0]["model_alias"]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path == "/v1/models" and self.headers.get("Authorization") == f"Bearer {key}"
            body = json.dumps({"object": "list", "data": [{"id": alias}]}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    HTTPServer((config["host"], config["port"]), Handler).serve_forever()


if __name__ == "__main__":
    main()
