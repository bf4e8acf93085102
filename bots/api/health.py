"""Probes: GET /healthz (alive) and GET /readyz (ready, with `factbot doctor`'s facts)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from bots.app.diagnosis import diagnose
from bots.app.root import App

DOCTOR_TTL = 30.0  # seconds /readyz reuses the doctor's facts


def health_router(app: App) -> APIRouter:
    """Return the probes' routes over an App."""
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness: the process answers, with the evidence index's size."""
        store = app.store
        stats = await store.call(store.documents.stats)
        return {
            "status": "ok",
            "documents": stats.documents,
            "passages": stats.passages,
            "sources": await store.call(store.sources.count),
        }

    doctor_cache: list[tuple[float, dict[str, Any]]] = []
    doctor_lock = asyncio.Lock()

    async def doctor_part() -> dict[str, Any]:
        # Probes and quick_check cost a little: a probe hitting /readyz every second must not.
        async with doctor_lock:
            if doctor_cache and time.monotonic() - doctor_cache[0][0] < DOCTOR_TTL:
                return doctor_cache[0][1]
            async with httpx.AsyncClient(verify=await app.tls()) as http:
                diagnosis = await diagnose(
                    app.settings, probe=app.resources.search_probe, http=http
                )
            doctor_cache[:] = [(time.monotonic(), diagnosis.to_json(with_settings=False))]
            return doctor_cache[0][1]

    @router.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: 200 when the database answers and a worker is alive, else 503 with the
        problems."""
        problems: list[str] = []
        try:
            await app.store.call(app.store.ping)
            database = "ok"
        except Exception as exc:  # noqa: BLE001 - any database failure means not ready
            database = f"failed: {exc}"
            problems.append(f"database {database}")
        within = 3 * max(app.settings.jobs.heartbeat_seconds, 5.0)
        store = app.store
        alive = [w.id for w in await store.call(store.workers.alive, within=within)]
        alive = alive if not problems else []
        if not alive:
            problems.append(
                "no worker is running: set FACTBOT_JOBS__WORKERS above 0 or start `factbot worker`"
            )
        model = app.model_choice
        body = {
            "status": "ready" if not problems else "not ready",
            "database": database,
            "workers": alive,
            "jobs": await store.call(store.jobs.counts) if database == "ok" else {},
            "model": model,
            "embedder": "loaded" if app.embedder_loaded else "not loaded",
            "platforms": sorted(app.adapters),
            "problems": problems,
            "doctor": await doctor_part(),
        }
        return JSONResponse(status_code=200 if not problems else 503, content=body)

    return router
