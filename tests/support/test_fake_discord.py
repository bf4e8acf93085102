"""The stand-in Discord itself: loud 404s, scripted failures, limits, nonces, the gateway."""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator

import aiohttp
import pytest

from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord, zstandard

AUTH = {"Authorization": "Bot bot-token"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as discord:
        discord.add_guild("10", [p.text_channel("20")])
        yield discord


async def test_unknown_routes_are_a_loud_404(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{fake.api_base}/guilds/10/members", headers=AUTH) as response:
            assert response.status == 404
            assert response.content_type == "application/json"
            assert "no route GET /guilds/10/members" in (await response.json())["message"]
        async with http.get(f"http://127.0.0.1:{fake.port}/elsewhere") as response:
            assert response.status == 404
    assert fake.requests[0].path == "/guilds/10/members"


async def test_scripted_429_carries_retry_after_and_via(fake: FakeDiscord) -> None:
    fake.script("POST", "/channels/*/messages", 429, retry_after=1.5)
    async with aiohttp.ClientSession() as http:
        url = f"{fake.api_base}/channels/20/messages"
        async with http.post(url, json={"content": "x"}, headers=AUTH) as response:
            assert response.status == 429
            assert response.headers["Retry-After"] == "1.5" and response.headers["Via"]
            assert (await response.json())["retry_after"] == 1.5
        async with http.post(url, json={"content": "x"}, headers=AUTH) as response:
            assert response.status == 200  # once only


async def test_messages_over_the_limits_are_refused_and_nonces_post_once(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http:
        url = f"{fake.api_base}/channels/20/messages"
        big = {"embeds": [{"description": "x" * 4097}]}
        async with http.post(url, json=big, headers=AUTH) as response:
            assert response.status == 400 and (await response.json())["code"] == 50035
        body = {"content": "hi", "nonce": "n1", "enforce_nonce": True}
        ids = []
        for _ in range(2):
            async with http.post(url, json=body, headers=AUTH) as response:
                ids.append((await response.json())["id"])
    assert ids[0] == ids[1] and len(fake.messages) == 1


async def test_wrong_token_is_401(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": "Bot nope"}
        async with http.get(f"{fake.api_base}/users/@me", headers=headers) as response:
            assert response.status == 401


async def test_gateway_speaks_zlib_stream_and_zstd_stream(fake: FakeDiscord) -> None:
    inflate = zlib.decompressobj()
    async with aiohttp.ClientSession() as http:
        url = f"{fake.gateway_url}?v=10&encoding=json&compress=zlib-stream"
        async with http.ws_connect(url) as ws:

            async def receive() -> dict:
                data = await ws.receive_bytes()
                assert data.endswith(b"\x00\x00\xff\xff")
                return json.loads(inflate.decompress(data))

            assert (await receive())["op"] == 10
            await ws.send_json({"op": 2, "d": {"token": "bot-token", "intents": 1}})
            ready = await receive()
            assert ready["t"] == "READY" and ready["d"]["resume_gateway_url"] == fake.gateway_url
            assert (await receive())["t"] == "GUILD_CREATE"
            await ws.send_json({"op": 1, "d": 2})
            assert (await receive())["op"] == 11
            await fake.dispatch("MESSAGE_CREATE", {"id": "1"})
            event = await receive()
            assert event["t"] == "MESSAGE_CREATE" and event["s"] == 3
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await http.ws_connect(f"{fake.gateway_url}?v=10&compress=brotli")
        if zstandard is None:
            with pytest.raises(aiohttp.WSServerHandshakeError):
                await http.ws_connect(f"{fake.gateway_url}?v=10&compress=zstd-stream")
            return
        unzstd = zstandard.ZstdDecompressor().decompressobj()
        async with http.ws_connect(f"{fake.gateway_url}?v=10&compress=zstd-stream") as ws:
            assert json.loads(unzstd.decompress(await ws.receive_bytes()))["op"] == 10
            await ws.send_json({"op": 1, "d": None})
            assert json.loads(unzstd.decompress(await ws.receive_bytes()))["op"] == 11


async def test_refusals_carry_discords_codes(fake: FakeDiscord) -> None:
    async def status_and_code(response: aiohttp.ClientResponse) -> tuple[int, int]:
        return response.status, (await response.json()).get("code")

    callback = {"type": 5, "data": {"flags": 64}}
    async with aiohttp.ClientSession() as http:
        url = f"{fake.api_base}/interactions/7/token-7/callback"
        async with http.post(url, json=callback) as response:
            assert response.status == 200
        async with http.post(url, json=callback) as response:  # a second callback
            assert await status_and_code(response) == (400, 40060)
        fake.expire("8")
        late = f"{fake.api_base}/interactions/8/token-8/callback"
        async with http.post(late, json=callback) as response:
            assert await status_and_code(response) == (404, 10062)
        thread = f"{fake.api_base}/channels/20/messages/30/threads"
        async with http.post(thread, json={"name": "t"}, headers=AUTH) as response:
            assert response.status == 200 and (await response.json())["id"] == "30"
        async with http.post(thread, json={"name": "t"}, headers=AUTH) as response:
            assert await status_and_code(response) == (400, 160004)
        async with http.get(f"{fake.api_base}/channels/31", headers=AUTH) as response:
            assert await status_and_code(response) == (404, 10003)
