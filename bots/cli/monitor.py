"""`factbot monitor`: the proactive monitor's scheduler process (bots.runtime.monitor)."""

from __future__ import annotations

import asyncio

import click

from bots.cli.context import app_from as _app


@click.command("monitor")
@click.pass_context
def monitor(ctx: click.Context) -> None:
    """Run the proactive monitor's scheduler: enqueue a scan of every source on schedule.

    One process holds the monitor lease in the database and schedules; a second one stands by
    and takes over when the lease lapses. Scans, checks and routing run in workers
    (`factbot worker` or `factbot serve`), which must have FACTBOT_MONITOR__ENABLED=true too.
    SIGTERM or Ctrl-C stops it and gives the lease up.

    \b
    Examples:
      FACTBOT_MONITOR__ENABLED=true FACTBOT_MONITOR__SLACK_CHANNELS='["C0123"]' factbot monitor
    """
    from bots.runtime.supervisor import Supervisor

    app = _app(ctx)
    if not app.settings.monitor.enabled:
        raise click.UsageError("the monitor is off: set FACTBOT_MONITOR__ENABLED=true")
    if not app.monitor_sources:
        raise click.UsageError(
            "the monitor has no sources: set FACTBOT_MONITOR__SLACK_CHANNELS or "
            "FACTBOT_MONITOR__DISCORD_CHANNELS (and the platform's token), see docs/monitor.md"
        )

    async def go() -> int:
        parts = Supervisor()
        parts.stop_on_signals()
        scheduler = app.monitor_scheduler()
        click.echo(
            f"monitor {scheduler.holder}: {len(scheduler.sources)} sources, every "
            f"{app.settings.monitor.interval_seconds:.0f} s",
            err=True,
        )
        parts.add("monitor", scheduler.run, essential=True)
        await parts.run()
        return len(scheduler.enqueued)

    scans = asyncio.run(go())
    click.echo(f"monitor stopped: {scans} scans enqueued", err=True)
