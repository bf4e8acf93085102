"""Language-model calls: one client owns them all (see `pipeline.llm.client`)."""

from pipeline.llm.client import (
    LLMClient,
    ModelEndpoint,
    ModelError,
    ModelOutputError,
    ModelUnavailableError,
    RetryPolicy,
)
from pipeline.llm.usage import StageUsage, UsageMeter, metering

__all__ = [
    "LLMClient",
    "ModelEndpoint",
    "ModelError",
    "ModelOutputError",
    "ModelUnavailableError",
    "RetryPolicy",
    "StageUsage",
    "UsageMeter",
    "metering",
]
