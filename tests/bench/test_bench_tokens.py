"""`bench latency-tokens` accounting: prefix reuse with and without the RAM cache, grammar keys."""

from __future__ import annotations

from bench.latency_tokens import Request, account, conform


class Chars:
    """A tokenizer of one token a character (enough to count prefixes)."""

    def tokens(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def chat_prompt(self, system: str, user: str) -> list[int]:
        return self.tokens(f"S{system}U{user}A")


def test_the_ram_cache_reuses_an_earlier_stage_prefix_the_last_request_lost() -> None:
    extraction, judge = "extract quotes" * 5, "judge claims" * 5
    requests = [
        Request("extraction", extraction, "claim one", "{}"),
        Request("judge", judge, "claim one", "{}"),
        Request("extraction", extraction, "claim two", "{}"),
    ]
    rows = account(requests, Chars(), [])
    assert [r["evaluated_no_cache"] for r in rows] == [
        rows[0]["prompt_tokens"],
        rows[1]["prompt_tokens"] - 1,  # only "S" is shared with the request before
        rows[2]["prompt_tokens"] - 1,
    ]
    # with earlier states kept, the second extraction starts after its whole system prompt
    shared = len(f"S{extraction}Uclaim ")
    assert rows[2]["evaluated_ram_cache"] == rows[2]["prompt_tokens"] - shared
    assert rows[1]["evaluated_ram_cache"] == rows[1]["evaluated_no_cache"]
    assert rows[0]["output_tokens"] == 2


def test_conform_keeps_only_what_the_schema_allows() -> None:
    schema = {
        "$defs": {"Item": {"properties": {"status": {"type": "string"}}, "type": "object"}},
        "properties": {"items": {"items": {"$ref": "#/$defs/Item"}, "type": "array"}},
        "type": "object",
    }
    answer = {"items": [{"status": "ok", "note": "dropped"}], "extra": 1}
    assert conform(answer, schema, schema["$defs"]) == {"items": [{"status": "ok"}]}
