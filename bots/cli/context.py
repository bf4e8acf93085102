"""The App of a CLI invocation: opened on first use, closed when the command ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from bots.settings import load_settings
from pipeline.errors import ConfigError

if TYPE_CHECKING:
    from bots.app.root import App


def app_from(ctx: click.Context) -> App:
    """Return the App of this invocation, opening it the first time."""
    from bots.app.root import App

    app = ctx.obj
    if app is None:
        try:
            app = App(load_settings())
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        ctx.obj = app
        ctx.call_on_close(app.close)
    assert isinstance(app, App)
    return app
