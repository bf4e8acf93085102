"""The stand-in X answers as the v2 API does (checked with plain aiohttp, not tweepy)."""

from __future__ import annotations

import aiohttp
from oauthlib.oauth1 import Client as OAuth1Signer

from tests.support.fake_x import NOT_ALLOWED, FakeX, oauth1_signature

AUTH = {"Authorization": "Bearer t"}


async def test_expansions_since_id_policy_and_scripts() -> None:
    async with FakeX() as x, aiohttp.ClientSession(headers=AUTH) as http:
        x.add_user("200", "alice")
        x.add_media("m1", url="https://img.example/1.jpg")
        x.add_tweet("1000", "200", "a claim", media_keys=("m1",))
        x.add_tweet("1001", "300", "@factbot true?", replied_to="1000")
        base = x.api_base
        params = {
            "expansions": "referenced_tweets.id,referenced_tweets.id.author_id,"
            "referenced_tweets.id.attachments.media_keys",
            "tweet.fields": "attachments",
        }
        async with http.get(f"{base}/2/users/100/mentions", params=params) as r:
            body = await r.json()
            assert r.headers["x-rate-limit-remaining"] == "99"
        assert [t["id"] for t in body["data"]] == ["1001"]
        assert body["includes"]["tweets"][0]["id"] == "1000"
        assert body["includes"]["media"][0]["media_key"] == "m1"
        assert body["meta"]["newest_id"] == "1001"
        async with http.get(f"{base}/2/users/100/mentions", params={"since_id": "1001"}) as r:
            assert (await r.json())["meta"]["result_count"] == 0
        reply = {"text": "no", "reply": {"in_reply_to_tweet_id": "1000"}}
        async with http.post(f"{base}/2/tweets", json=reply) as r:
            assert r.status == 403 and (await r.json())["detail"] == NOT_ALLOWED
        x.script("create", 429, reset_in=10)
        reply["reply"]["in_reply_to_tweet_id"] = "1001"  # type: ignore[index]
        async with http.post(f"{base}/2/tweets", json=reply) as r:
            assert r.status == 429 and r.headers["x-rate-limit-remaining"] == "0"
        async with http.post(f"{base}/2/tweets", json=reply) as r:
            assert r.status == 201
        async with aiohttp.ClientSession() as anonymous, anonymous.get(f"{base}/2/users/me") as r:
            assert r.status == 401
        async with http.get(f"{base}/2/nowhere") as r:
            assert r.status == 404
        x.unknown.clear()  # seen; the stand-in would fail the test on close otherwise


async def test_notes_are_validated_like_x_does() -> None:
    async with FakeX() as x, aiohttp.ClientSession(headers=AUTH) as http:
        x.add_tweet("1000", "200", "a claim")
        bad = {"post_id": "1000", "info": {"text": "no source", "classification": "x"}}
        async with http.post(f"{x.api_base}/2/notes", json=bad) as r:
            detail = (await r.json())["detail"]
            assert r.status == 400 and "source URL" in detail and "test_mode" in detail
        good = {
            "test_mode": True,
            "post_id": "1000",
            "info": {
                "text": "Not so: https://a.example",
                "trustworthy_sources": True,
                "classification": "misinformed_or_potentially_misleading",
                "misleading_tags": ["factual_error"],
            },
        }
        async with http.post(f"{x.api_base}/2/notes", json=good) as r:
            assert r.status == 201
        async with http.post(f"{x.api_base}/2/notes", json=good) as r:
            assert r.status == 409
        x.set_note_status("1000", "currently_rated_helpful", UrlValidity="high")
        written = f"{x.api_base}/2/notes/search/notes_written"
        async with http.get(written, params={"test_mode": "true"}) as r:
            [note] = (await r.json())["data"]
        assert set(note) == {"id", "info"}  # status and test_result only when asked
        fields = {"test_mode": "true", "note.fields": "status,test_result"}
        async with http.get(written, params=fields) as r:
            [note] = (await r.json())["data"]
        assert note["status"] == "currently_rated_helpful"
        assert note["test_result"]["evaluation_outcome"][0]["evaluator_type"] == "UrlValidity"


def test_the_signature_is_rfc_5849s_own_example() -> None:
    params = [
        ("file", "vacation.jpg"),
        ("size", "original"),
        ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
        ("oauth_token", "nnch734d00sl2jdk"),
        ("oauth_signature_method", "HMAC-SHA1"),
        ("oauth_timestamp", "137131202"),
        ("oauth_nonce", "chapoH"),
    ]
    signature = oauth1_signature(
        "GET", "http://photos.example.net/photos", params, "kd94hf93k423kf44", "pfkkdhi9sl3r4s00"
    )
    assert signature == "MdpQcU8iPSUjWoN/UDMsK2sui9I="  # RFC 5849 section 1.2


async def test_an_oauth1_request_signed_for_another_url_or_key_is_refused() -> None:
    keys = ("ck", "cs", "at", "ats")
    async with FakeX(oauth1=keys) as x, aiohttp.ClientSession() as http:
        query = (
            "?since_id=1&tweet.fields=created_at%2Cauthor_id&start_time=2026-01-01T00%3A00%3A00Z"
        )
        called = f"{x.api_base}/2/users/100/mentions{query}"

        async def status(signed_for: str, secret: str = "ats") -> int:
            signer = OAuth1Signer(keys[0], keys[1], keys[2], secret)
            _, headers, _ = signer.sign(signed_for, "GET")
            async with http.get(called, headers=headers) as r:
                return r.status

        assert await status(called) == 200
        assert await status(f"https://api.twitter.com/2/users/100/mentions{query}") == 401
        assert await status(called.replace("since_id=1", "since_id=2")) == 401
        assert await status(called, secret="other") == 401
