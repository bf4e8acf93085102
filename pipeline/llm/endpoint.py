"""Where a model is and how to call it: endpoints, prices, timeouts and the retry policy."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from pipeline.errors import ConfigError
from pipeline.util.retrying import Backoff


@dataclass(frozen=True)
class ModelEndpoint:
    """An OpenAI-compatible chat model: where it is, what it costs, how hard to push it."""

    base_url: str
    api_key: SecretStr | str = field(repr=False)
    model: str
    supports_json_schema: bool = True
    strict_schema: bool = True
    # llama-cpp-python: no json_schema, but `{"type": "json_object", "schema": ...}` becomes a
    # grammar, so the answer cannot leave the schema (enums, lengths, item counts included)
    schema_in_json_object: bool = False
    # a server that keeps generating after the client gives up (llama-cpp-python, one slot)
    # would only queue the retry behind the abandoned answer: a timeout is final there
    retry_timeouts: bool = True
    supports_images: bool = False  # the model reads image content parts (a vision model)
    input_price_per_mtok: float = 0.0
    output_price_per_mtok: float = 0.0
    timeout: float = 60.0
    max_concurrency: int = 4

    def __post_init__(self) -> None:
        if isinstance(self.api_key, str):
            object.__setattr__(self, "api_key", SecretStr(self.api_key))
        if self.timeout <= 0:
            raise ConfigError(f"model endpoint timeout must be positive, not {self.timeout}")
        if self.max_concurrency < 1:
            raise ConfigError("model endpoint max_concurrency must be at least 1")
        if self.input_price_per_mtok < 0 or self.output_price_per_mtok < 0:
            raise ConfigError("model endpoint prices per million tokens cannot be negative")

    def secret(self) -> str:
        """Return the API key in clear, for the SDK only."""
        key = self.api_key
        return key.get_secret_value() if isinstance(key, SecretStr) else key

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Return the price in USD of a call that used these tokens."""
        return (
            input_tokens * self.input_price_per_mtok + output_tokens * self.output_price_per_mtok
        ) / 1_000_000


@dataclass(frozen=True)
class RetryPolicy(Backoff):
    """How often and how long to wait when an endpoint is busy, failing or unreachable."""

    jitter: float = 0.25  # many checks share one endpoint: spread their retries
