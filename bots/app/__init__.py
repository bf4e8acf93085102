"""The composition root, split by lifetime: `root.App` over `resources` (what the process opens
once), `checks` (what one check needs) and `services` (the one way in, platforms, monitor,
review); `deps` hands the routes their parts."""
