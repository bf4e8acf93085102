"""Platform user ids are stored as keyed pseudonyms; platform checks are redacted after a while.

A pseudonym is HMAC-SHA256(key, "platform:user id"), so the same user maps to the same value
(rate limits, opt-outs and `factbot forget` work) while the database alone does not say who
they are. The key comes from FACTBOT_PRIVACY__PSEUDONYM_KEY, else a random key generated once
and kept in the database (`kv`) — set the variable to keep the key apart from the data.
With FACTBOT_PRIVACY__KEEP_USER_IDS the raw ids are stored instead (an operator's choice).
Images uploaded as bytes (API, dashboard, CLI) are removed from their posts after the same
retention period.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
from datetime import timedelta

from bots.settings import PrivacySettings
from storage import Store

log = logging.getLogger(__name__)

KEY = "privacy:pseudonym-key"


class Pseudonyms:
    """Turn platform user ids into what factbot stores."""

    def __init__(self, store: Store, settings: PrivacySettings) -> None:
        self.keep = settings.keep_user_ids
        if settings.pseudonym_key is not None:
            secret = settings.pseudonym_key.get_secret_value()
        else:
            secret = store.state.set_if_absent(KEY, secrets.token_hex(32))
        self._key = secret.encode()

    def user(self, platform: str, user_id: str) -> str:
        """Return the stored form of a platform user id."""
        if self.keep:
            return user_id
        digest = hmac.new(self._key, f"{platform}:{user_id}".encode(), hashlib.sha256)
        return "u_" + digest.hexdigest()[:32]


def redact_expired(store: Store, settings: PrivacySettings) -> int:
    """Redact platform checks older than the retention period; return how many.

    Uploaded image bytes older than the period are removed too (not counted).
    """
    cutoff = store.clock.now() - timedelta(days=settings.retention_days)
    count = store.platform.redact_before(cutoff)
    count += store.monitor.redact_before(cutoff)  # posts the proactive monitor read
    if count:
        log.info("platform checks redacted", extra={"count": count, "before": cutoff.isoformat()})
    # Images uploaded to the API, the dashboard or `factbot check`, whoever sent them.
    uploads = store.checks.drop_uploads_before(cutoff)
    if uploads:
        log.info("uploaded images removed", extra={"posts": uploads, "before": cutoff.isoformat()})
    return count


async def retention_loop(
    store: Store, settings: PrivacySettings, stop: asyncio.Event, *, every: float = 3600.0
) -> None:
    """Redact expired platform checks now and then every `every` seconds until stop is set."""
    while not stop.is_set():
        try:
            await store.call(redact_expired, store, settings)
        except Exception as exc:  # noqa: BLE001 - retried at the next round
            log.warning("retention sweep failed", extra={"error": repr(exc)})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
