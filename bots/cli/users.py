"""`factbot users`: the people who may sign in to the dashboard, and their roles."""

from __future__ import annotations

import sys
from typing import cast

import click

from storage.users import ROLES, Role


@click.group("users")
def users_group() -> None:
    """Dashboard users: viewer (reads), reviewer (also checks and reviews), admin (everything).

    \b
    Examples:
      factbot users add alice --role admin              # asks for the password twice
      printf '%s' "$PASSWORD" | factbot users add bob --role reviewer --password-stdin
      factbot users invite carol@example.org --role viewer   # prints a one-time link
      factbot users list
    """


@users_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True, help="What the user may do.")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.option("--replace", is_flag=True, help="Reset the role and password of an existing user.")
@click.pass_context
def add(ctx: click.Context, name: str, role: str, password_stdin: bool, replace: bool) -> None:
    """Add a user (argon2-hashed password); the first user ends the open mode."""
    from bots.cli.context import app_from as _app

    if password_stdin:
        password = sys.stdin.read().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    app = _app(ctx)
    user = app.store.users.add(name, cast(Role, role), password, replace=replace)
    click.echo(f"user {user.name} ({user.role}) can sign in at /signin")


@users_group.command("invite")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True, help="What the user may do.")
@click.option(
    "--hours",
    type=click.FloatRange(min=0.1, max=720),
    default=48.0,
    show_default=True,
    help="How long the link works.",
)
@click.pass_context
def invite(ctx: click.Context, name: str, role: str, hours: float) -> None:
    """Print a one-time link that lets NAME (an e-mail address, say) choose a password.

    Only the hash of the link's token is stored; send the link yourself. The link's host is
    FACTBOT_REPLIES__PUBLIC_BASE_URL, else the server's own address.
    """
    from bots.cli.context import app_from as _app

    app = _app(ctx)
    token = app.store.users.invite(name, cast(Role, role), hours=hours)
    server = app.settings.server
    base = app.settings.replies.public_base_url or f"http://{server.host}:{server.port}"
    click.echo(f"{base.rstrip('/')}/invite/{token}")
    click.echo(f"{name} ({role}) may follow this link once within {hours:g} hours", err=True)


@users_group.command("list")
@click.pass_context
def list_(ctx: click.Context) -> None:
    """List users and their roles."""
    from bots.cli.context import app_from as _app

    app = _app(ctx)
    users = app.store.users.all()
    for user in users:
        state = " (disabled)" if user.disabled else ""
        click.echo(f"{user.name:30} {user.role:9} {user.created_at:%Y-%m-%d}{state}")
    click.echo(f"{len(users)} users")


@users_group.command("disable")
@click.argument("name")
@click.pass_context
def disable(ctx: click.Context, name: str) -> None:
    """Stop a user from signing in (their sessions end at once)."""
    from bots.cli.context import app_from as _app

    if not _app(ctx).store.users.disable(name):
        raise click.ClickException(f"no user {name!r}")
    click.echo(f"user {name} disabled")
