"""The HTTP API: `routes.create_api` over route modules (health, submit, results, jobs, metrics).

Check requests go in through `bots.runtime.checking.requests.CheckRequests` like every other
way in; the API never imports the dashboard (an import contract)."""
