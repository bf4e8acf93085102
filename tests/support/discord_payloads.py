"""Discord API payloads as the real Discord sends them, with the fields discord.py 2.7.1 requires.

Used by the stand-in (`fake_discord`) and by tests that build inbound events. Gotchas kept here:
`Member` needs `flags`, `Interaction` needs `attachment_size_limit`, `Thread` needs
`member_count` and `message_count`.
"""

from __future__ import annotations

from typing import Any

NOW = "2026-12-01T10:00:00.000000+00:00"
_NOW_SNOWFLAKE = 1577262986035200000  # an id made at NOW: (ms since 2015) << 22


def snowflake(n: int) -> str:
    """Return the n-th id made at NOW (ids carry their time: Message.created_at is read off it)."""
    return str(_NOW_SNOWFLAKE + n)


ALL_PERMISSIONS = str((1 << 51) - 1)
SEND_ONLY = str((1 << 10) | (1 << 11) | (1 << 14) | (1 << 16))  # view, send, embed, history


def user(user_id: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    """Return a user object."""
    return {
        "id": user_id,
        "username": name,
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


def member(account: dict[str, Any], *, permissions: str = SEND_ONLY) -> dict[str, Any]:
    """Return a guild member object (as in an interaction: with permissions)."""
    return {
        "user": account,
        "roles": [],
        "joined_at": NOW,
        "deaf": False,
        "mute": False,
        "flags": 0,
        "pending": False,
        "permissions": permissions,
    }


def text_channel(channel_id: str, name: str = "general", *, kind: int = 0) -> dict[str, Any]:
    """Return a guild text channel (type 0; 5 for announcements)."""
    return {
        "id": channel_id,
        "type": kind,
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "flags": 0,
    }


def thread(thread_id: str, guild_id: str, parent_id: str, name: str) -> dict[str, Any]:
    """Return a public thread channel (type 11)."""
    return {
        "id": thread_id,
        "guild_id": guild_id,
        "parent_id": parent_id,
        "owner_id": "900",
        "name": name,
        "type": 11,
        "last_message_id": None,
        "member_count": 1,
        "message_count": 0,
        "rate_limit_per_user": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": NOW,
            "locked": False,
        },
    }


def guild(guild_id: str, bot: dict[str, Any], channels: list[dict[str, Any]]) -> dict[str, Any]:
    """Return a GUILD_CREATE payload with the bot as a member."""
    everyone = {
        "id": guild_id,
        "name": "@everyone",
        "color": 0,
        "hoist": False,
        "position": 0,
        "permissions": ALL_PERMISSIONS,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    return {
        "id": guild_id,
        "name": "Test guild",
        "icon": None,
        "owner_id": "1",
        "roles": [everyone],
        "emojis": [],
        "stickers": [],
        "features": [],
        "member_count": 2,
        "large": False,
        "unavailable": False,
        "channels": [{k: v for k, v in c.items() if k != "guild_id"} for c in channels],
        "threads": [],
        "members": [member(bot)],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "joined_at": NOW,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "system_channel_flags": 0,
    }


def attachment(
    attachment_id: str, filename: str, *, content_type: str | None, size: int
) -> dict[str, Any]:
    """Return a message attachment."""
    url = f"https://cdn.discordapp.com/attachments/1/{attachment_id}/{filename}"
    data: dict[str, Any] = {
        "id": attachment_id,
        "filename": filename,
        "size": size,
        "url": url,
        "proxy_url": url.replace("cdn.discordapp.com", "media.discordapp.net"),
    }
    if content_type is not None:
        data["content_type"] = content_type
    return data


def message(
    message_id: str,
    channel_id: str,
    author: dict[str, Any],
    content: str,
    *,
    guild_id: str | None = None,
    attachments: list[dict[str, Any]] | None = None,
    embeds: list[dict[str, Any]] | None = None,
    mentions: list[dict[str, Any]] | None = None,
    reference: dict[str, Any] | None = None,
    webhook_id: str | None = None,
) -> dict[str, Any]:
    """Return a message object."""
    data: dict[str, Any] = {
        "id": message_id,
        "channel_id": channel_id,
        "author": author,
        "content": content,
        "timestamp": NOW,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": [],
        "attachments": attachments or [],
        "embeds": embeds or [],
        "pinned": False,
        "type": 19 if reference else 0,
        "flags": 0,
    }
    if guild_id is not None:
        data["guild_id"] = guild_id
    if webhook_id is not None:
        data["webhook_id"] = webhook_id
    if reference is not None:
        data["message_reference"] = {
            "message_id": reference["id"],
            "channel_id": reference["channel_id"],
            "guild_id": guild_id,
        }
        data["referenced_message"] = reference
    return data


def interaction(
    interaction_id: str,
    command: dict[str, Any],
    *,
    guild_id: str,
    channel: dict[str, Any],
    requester: dict[str, Any],
    application_id: str = "100",
    permissions: str = SEND_ONLY,
    app_permissions: str = ALL_PERMISSIONS,
    locale: str = "en-US",
) -> dict[str, Any]:
    """Return an INTERACTION_CREATE payload (type 2, an application command).

    `locale` is the requester's Discord client language ("es-ES", "zh-CN", "ja").
    """
    return {
        "id": interaction_id,
        "application_id": application_id,
        "type": 2,
        "token": f"token-{interaction_id}",
        "version": 1,
        "guild_id": guild_id,
        "channel_id": channel["id"],
        "channel": {**channel, "guild_id": guild_id},
        "member": member(requester, permissions=permissions),
        "app_permissions": app_permissions,
        "locale": locale,
        "guild_locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": guild_id},
        "context": 0,
        "attachment_size_limit": 10 * 1024 * 1024,
        "data": command,
    }


def context_menu(
    target: dict[str, Any], *, name: str = "Fact-check this message"
) -> dict[str, Any]:
    """Return the data of a message context-menu command on target."""
    return {
        "id": "700",
        "name": name,
        "type": 3,
        "target_id": target["id"],
        "resolved": {"messages": {target["id"]: target}},
    }


def slash(name: str, options: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the data of a chat-input command with options."""
    return {"id": "701", "name": name, "type": 1, "options": options}


def callback_response(interaction_id: str, body: Any) -> dict[str, Any]:
    """Return the body of POST /interactions/{id}/{token}/callback?with_response=1."""
    flags = ((body or {}).get("data") or {}).get("flags", 0)
    return {
        "interaction": {
            "id": interaction_id,
            "type": 2,
            "response_message_id": None,
            "response_message_loading": (body or {}).get("type") == 5,
            "response_message_ephemeral": bool(flags & 64),
        },
        "resource": None,
    }


def application(application_id: str, bot: dict[str, Any]) -> dict[str, Any]:
    """Return GET /oauth2/applications/@me."""
    return {
        "id": application_id,
        "name": "factbot",
        "description": "",
        "icon": None,
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": user("1", "owner"),
        "verify_key": "0" * 64,
        "flags": 0,
        "bot": bot,
        "interactions_endpoint_url": None,
        "redirect_uris": [],
    }


def component_interaction(
    interaction_id: str,
    message: dict[str, Any],
    custom_id: str,
    *,
    guild_id: str,
    channel: dict[str, Any],
    requester: dict[str, Any],
    roles: list[str] | None = None,
    application_id: str = "100",
) -> dict[str, Any]:
    """Return an INTERACTION_CREATE payload of a button click (type 3) on message."""
    data = interaction(
        interaction_id,
        {"custom_id": custom_id, "component_type": 2},
        guild_id=guild_id,
        channel=channel,
        requester=requester,
        application_id=application_id,
    )
    data["type"] = 3
    data["message"] = message
    data["member"]["roles"] = list(roles or [])
    return data


def modal_submit(
    interaction_id: str,
    custom_id: str,
    values: dict[str, str],
    *,
    guild_id: str,
    channel: dict[str, Any],
    requester: dict[str, Any],
    message: dict[str, Any] | None = None,
    roles: list[str] | None = None,
) -> dict[str, Any]:
    """Return an INTERACTION_CREATE payload of a modal submitted (type 5), text inputs filled."""
    rows = [
        {"type": 1, "components": [{"type": 4, "custom_id": key, "value": value}]}
        for key, value in values.items()
    ]
    data = interaction(
        interaction_id,
        {"custom_id": custom_id, "components": rows},
        guild_id=guild_id,
        channel=channel,
        requester=requester,
    )
    data["type"] = 5
    data["member"]["roles"] = list(roles or [])
    if message is not None:
        data["message"] = message
    return data
