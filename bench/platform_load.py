"""`factbot bench platforms`: N mentions, mixed Discord and Slack, from event to reply.

Everything on factbot's side is what `factbot serve` runs: the API under uvicorn with its
worker pool, the Discord listener on a gateway, the Slack events endpoint, the platform
service, check jobs through the embedded pipeline (no model) over a local evidence index, and
reply jobs through the real discord.py and slack_sdk. The peers are the stand-in Discord
(REST + gateway) and Slack (Web API + signed event delivery) from tests/support, in the same
event loop as the service (so the figures include the stand-ins' own share of one loop).

Each mention is a reply to (Discord) or in the thread of (Slack) a message holding one real
claim (AVeriTeC dev), written by a different user so the per-user rate limit does not refuse
them; the channel and workspace limits and the budgets are lifted for the run. Mentions go
out at `--rate` per second (0: all at once, which measures throughput; queueing then shows in
the latency). A mention's latency runs from its delivery to the first reply factbot posted for
it (polled every 20 ms). Lost: mentions with no reply once every job has ended; duplicated:
mentions with more than one reply. Both must be 0.
"""

from __future__ import annotations

import asyncio
import json
import resource
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from bench.reuse import percentile

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT.parent / "shared" / "data" / "eval" / "averitec" / "dev.json"
INDEX = ROOT.parent / "shared" / "data" / "corpus" / "recovery" / "articles.jsonl"
GUILD, DISCORD_CHANNEL, SLACK_TEAM, SLACK_CHANNEL = "10", "20000000000000001", "T1", "C1"
SECRET = "bench-signing-secret"


@dataclass
class Mention:
    """One mention sent, and what came back."""

    platform: str
    key: str  # Discord: the target message id; Slack: the parent message ts
    sent_at: float = 0.0
    replies: list[float] = field(default_factory=list)


def _claims(limit: int) -> list[str]:
    rows = json.loads(CLAIMS.read_text(encoding="utf-8"))
    seen: dict[str, None] = {}
    for row in rows:
        text = " ".join(str(row.get("claim") or "").split())
        if len(text) > 20:
            seen.setdefault(text, None)
    claims = list(seen)
    if not claims:
        raise click.ClickException(f"no claims found in {CLAIMS}")
    return [claims[n % len(claims)] for n in range(limit)]


def _index_slice(source: Path, docs: int, folder: Path) -> Path:
    out = folder / "index.jsonl"
    with source.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for n, line in enumerate(src):
            if n >= docs:
                break
            row = json.loads(line)
            row.setdefault("published_at", row.get("publish_date"))
            dst.write(json.dumps(row) + "\n")
    return out


async def run_load(
    *, mentions: int, workers: int, rate: float, docs: int, index: Path, wait_seconds: float
) -> dict[str, Any]:
    """Run the load and return the figures."""
    import uvicorn

    from bots.app.root import App
    from bots.settings import (
        BudgetSettings,
        DiscordSettings,
        GuardSettings,
        JobSettings,
        SearchSettings,
        Settings,
        SlackSettings,
    )
    from bots.web import create_web
    from pipeline.evidence.ingest import Ingester
    from tests.support import discord_payloads as p
    from tests.support.fake_discord import FakeDiscord
    from tests.support.fake_slack import FakeSlack

    texts = _claims(mentions)
    folder = Path(tempfile.mkdtemp(prefix="factbot-load-"))
    async with FakeDiscord() as discord, FakeSlack(signing_secret=SECRET) as slack:
        discord.add_guild(GUILD, [p.text_channel(DISCORD_CHANNEL)])
        slack.add_team(SLACK_TEAM, token="xoxb-bench")
        huge = 10**9
        settings = Settings(
            data_dir=folder / "data",
            log_level="WARNING",
            search=SearchSettings(enabled=False),  # the local index only: no internet
            jobs=JobSettings(workers=workers, poll_seconds=0.05, heartbeat_seconds=5.0),
            guards=GuardSettings(
                channel_burst=huge,
                channel_per_hour=huge,
                workspace_burst=huge,
                workspace_per_hour=huge,
            ),
            budgets=BudgetSettings(checks_per_day=0, usd_per_month=0),
            discord=DiscordSettings(
                token=discord.token,
                api_base=discord.api_base,
                gateway_url=discord.gateway_url,
                message_content=True,
                guild_ready_timeout=0.05,
            ),
            slack=SlackSettings(
                bot_token="xoxb-bench", signing_secret=SECRET, api_base=slack.api_base
            ),
        )
        app = App(settings)
        started = time.perf_counter()
        indexed = await Ingester(app.store.documents, app.embedder).ingest(
            [str(_index_slice(index, docs, folder))]
        )
        ingest_seconds = time.perf_counter() - started
        config = uvicorn.Config(
            create_web(app), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn has no started event
            await asyncio.sleep(0.02)
        events_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        events_url += settings.slack.events_path
        await asyncio.wait_for(discord.identified.wait(), 30)
        await asyncio.sleep(0.5)  # the listener's guild cache

        sent: list[Mention] = []
        start = time.perf_counter()
        watcher = asyncio.create_task(_watch(sent, discord, slack))
        for n, text in enumerate(texts):
            if rate > 0:
                await asyncio.sleep(max(0.0, start + n / rate - time.perf_counter()))
            if n % 2 == 0:
                target_id = p.snowflake(10_000 + n)
                author = p.user(p.snowflake(500_000 + n), f"author{n}")
                target = p.message(target_id, DISCORD_CHANNEL, author, text, guild_id=GUILD)
                asker = p.user(p.snowflake(900_000 + n), f"asker{n}")
                mention = p.message(
                    p.snowflake(20_000 + n),
                    DISCORD_CHANNEL,
                    asker,
                    f"<@{discord.bot['id']}> is this true?",
                    guild_id=GUILD,
                    mentions=[discord.bot],
                    reference=target,
                )
                record = Mention("discord", target_id, time.perf_counter())
                sent.append(record)
                await discord.dispatch("MESSAGE_CREATE", mention)
            else:
                parent = f"1700000000.{n:06d}"
                slack.add_message(SLACK_TEAM, SLACK_CHANNEL, ts=parent, user=f"UA{n}", text=text)
                envelope = {
                    "token": "x",
                    "team_id": SLACK_TEAM,
                    "api_app_id": "A0FACTBOT",
                    "type": "event_callback",
                    "event_id": f"Ev{n:06d}",
                    "event_time": 1700000100,
                    "event": {
                        "type": "app_mention",
                        "user": f"UQ{n}",
                        "channel": SLACK_CHANNEL,
                        "ts": f"1700000100.{n:06d}",
                        "thread_ts": parent,
                        "text": "<@UBOT> is this true?",
                        "event_ts": f"1700000100.{n:06d}",
                    },
                }
                record = Mention("slack", parent, time.perf_counter())
                sent.append(record)
                status, _ = await slack.deliver_event(events_url, envelope)
                if status != 200:
                    raise click.ClickException(f"Slack delivery answered {status}")
        sending_seconds = time.perf_counter() - start
        deadline = time.monotonic() + wait_seconds
        db = app.store.db
        while time.monotonic() < deadline:
            stored = db.execute("SELECT count(*) FROM platform_requests").fetchone()[0]
            open_jobs = db.execute(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            ).fetchone()[0]
            if stored >= mentions and open_jobs == 0:
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # a duplicate, if one were coming, shows by now
        total = time.perf_counter() - start
        watcher.cancel()
        _collect(sent, discord, slack, time.perf_counter())
        jobs = app.store.jobs.counts()
        dead = db.execute(
            "SELECT kind, count(*) FROM jobs WHERE status = 'dead' GROUP BY kind"
        ).fetchall()
        server.should_exit = True
        await serving
        app.close()

    latencies = [m.replies[0] - m.sent_at for m in sent if m.replies]
    per_platform = {
        name: sorted(m.replies[0] - m.sent_at for m in sent if m.platform == name and m.replies)
        for name in ("discord", "slack")
    }
    answered = [m for m in sent if m.replies]
    return {
        "mentions": mentions,
        "workers": workers,
        "rate_per_second": rate or "all at once",
        "index_documents": indexed.added + indexed.unchanged,
        "ingest_seconds": round(ingest_seconds, 1),
        "sending_seconds": round(sending_seconds, 2),
        "total_seconds": round(total, 2),
        "throughput_replies_per_second": round(len(answered) / total, 2) if total else 0.0,
        "latency_p50_seconds": percentile(latencies, 50) if latencies else None,
        "latency_p95_seconds": percentile(latencies, 95) if latencies else None,
        "latency_by_platform_p50_p95": {
            name: [percentile(v, 50), percentile(v, 95)] if v else None
            for name, v in per_platform.items()
        },
        "lost": sum(1 for m in sent if not m.replies),
        "duplicated": sum(1 for m in sent if len(m.replies) > 1),
        "jobs": jobs,
        "dead_jobs": dict(dead),
        "peak_memory_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _replies(discord: Any, slack: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    for r in discord.posted_messages():
        found[r.path.split("/")[2]] += 1  # /channels/{thread = target id}/messages
    for method in ("chat.postMessage", "chat.postEphemeral"):
        for call in slack.calls(method):
            found[str(call.body.get("thread_ts"))] += 1
    return found


def _collect(sent: list[Mention], discord: Any, slack: Any, now: float) -> None:
    counts = _replies(discord, slack)
    for m in sent:
        while len(m.replies) < counts.get(m.key, 0):
            m.replies.append(now)


async def _watch(sent: list[Mention], discord: Any, slack: Any) -> None:
    while True:
        _collect(sent, discord, slack, time.perf_counter())
        await asyncio.sleep(0.02)


@click.command("platforms")
@click.option("--mentions", type=click.IntRange(2), default=500, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option(
    "--rate", type=float, default=0.0, show_default=True, help="Mentions per second (0: burst)."
)
@click.option("--docs", type=click.IntRange(1), default=100, show_default=True, help="Indexed.")
@click.option(
    "--index", type=click.Path(exists=True, path_type=Path), default=INDEX, show_default=True
)
@click.option("--timeout", type=float, default=1800.0, show_default=True)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def platforms_bench(
    mentions: int,
    workers: int,
    rate: float,
    docs: int,
    index: Path,
    timeout: float,
    report_path: Path | None,
) -> None:
    """Send N mentions (half Discord, half Slack) through the stand-ins; print the figures."""
    import os

    os.environ.setdefault("FACTBOT_MODEL__MODE", "none")
    figures = asyncio.run(
        run_load(
            mentions=mentions,
            workers=workers,
            rate=rate,
            docs=docs,
            index=index,
            wait_seconds=timeout,
        )
    )
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
