"""The supervisor every long-running command uses: start order, the one stop path, closers."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bots.runtime.supervisor import Supervisor


async def test_parts_start_in_order_and_close_in_reverse_after_they_stop() -> None:
    seen: list[str] = []
    sup = Supervisor()

    def part(name: str):  # type: ignore[no-untyped-def]
        async def run(stop: asyncio.Event) -> None:
            seen.append(f"start {name}")
            await stop.wait()
            await asyncio.sleep(0.01)  # finishing its work after stop
            seen.append(f"end {name}")

        return run

    async def close(name: str) -> None:
        seen.append(f"close {name}")

    sup.add("a", part("a"))
    sup.add("b", part("b"))
    sup.close_with(lambda: close("first added"))
    sup.close_with(lambda: close("last added"))
    sup.start()
    await asyncio.sleep(0.01)
    await sup.shutdown()
    assert seen[:2] == ["start a", "start b"]
    assert sorted(seen[2:4]) == ["end a", "end b"]
    assert seen[4:] == ["close last added", "close first added"]


async def test_an_essential_part_that_fails_stops_the_process_and_its_error_is_raised() -> None:
    finished: list[str] = []
    sup = Supervisor()

    async def fails(stop: asyncio.Event) -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("database gone")

    async def other(stop: asyncio.Event) -> None:
        await stop.wait()
        finished.append("other")

    sup.add("jobs", fails, essential=True)
    sup.add("listener", other)
    with pytest.raises(RuntimeError, match="database gone"):
        await asyncio.wait_for(sup.run(), 5)
    assert finished == ["other"]  # the others were stopped the ordinary way


async def test_a_failed_part_that_is_not_essential_is_logged_and_the_rest_runs_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sup = Supervisor()

    async def fails(stop: asyncio.Event) -> None:
        raise ValueError("gateway refused")

    sup.add("discord", fails)
    with caplog.at_level(logging.WARNING, logger="bots.runtime.supervisor"):
        sup.start()
        await asyncio.sleep(0.01)
    assert not sup.stop.is_set()
    assert [r.part for r in caplog.records] == ["discord"]  # type: ignore[attr-defined]
    await sup.shutdown()  # a non-essential part's error is not raised


async def test_parts_marked_cancel_are_cancelled_at_stop() -> None:
    sup = Supervisor()
    cancelled: list[str] = []

    async def sweep(stop: asyncio.Event) -> None:
        try:
            await asyncio.sleep(3600)  # ignores stop: would hold shutdown for an hour
        except asyncio.CancelledError:
            cancelled.append("sweep")
            raise

    sup.add("sweep", sweep, cancel=True)
    sup.start()
    await asyncio.sleep(0.01)
    await asyncio.wait_for(sup.shutdown(), 5)
    assert cancelled == ["sweep"]
