"""`factbot db`: the database's engine and migrations (applied on start; here by hand)."""

from __future__ import annotations

import click


def _target() -> tuple[str, str | None]:
    from bots.settings import load_settings
    from pipeline.errors import ConfigError

    try:
        settings = load_settings()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    url = settings.database_url.get_secret_value() if settings.database_url else None
    return str(settings.database_path), url


@click.group("db")
def db_group() -> None:
    """The database: SQLite in FACTBOT_DATA_DIR, or PostgreSQL at FACTBOT_DATABASE_URL.

    Every process applies pending migrations when it starts (under a lock: several starting
    at once migrate once); these commands do it, or show it, before a deployment starts.

    \b
    Examples:
      factbot db status
      FACTBOT_DATABASE_URL=postgresql://factbot@db/factbot factbot db migrate
    """


@db_group.command("status")
def status() -> None:
    """Show the engine and which migrations are applied and pending (changes nothing)."""
    from pathlib import Path

    from storage.health import migration_status

    path, url = _target()
    try:
        found = migration_status(Path(path), database_url=url)
    except Exception as exc:
        raise click.ClickException(f"cannot read the database: {exc}") from exc
    click.echo(f"engine: {found.engine} ({found.where})")
    click.echo(
        f"applied: {len(found.applied)}" + (f" (last {found.applied[-1]})" if found.applied else "")
    )
    if found.pending:
        click.echo(f"pending: {len(found.pending)}: {', '.join(found.pending)}")
        click.echo("apply them: factbot db migrate (or start factbot)")
    else:
        click.echo("pending: none")


@db_group.command("migrate")
def migrate() -> None:
    """Apply pending migrations now (once, whatever else is starting)."""
    from pathlib import Path

    from storage import Store
    from storage.health import migration_status

    path, url = _target()
    before = migration_status(Path(path), database_url=url)
    with Store.open(path, database_url=url) as store:
        applied = store.applied_migrations()
    ran = [name for name in applied if name not in before.applied]
    click.echo(f"engine: {before.engine} ({before.where})")
    click.echo(f"applied now: {', '.join(ran) if ran else 'nothing (up to date)'}")
