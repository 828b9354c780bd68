"""Where a bot's token comes from: ``BETE_TOKEN``, a saved token file, or a new registration.

The server keeps only a hash of a token and shows it once, so a registered token is saved
(mode 0600) and reused on the next run against the same server.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import grpc
from bete.v1 import table_service_pb2, table_service_pb2_grpc

from .client import DEFAULT_TIMEOUT, register_bot
from .errors import BeteError
from .tls import open_channel

log = logging.getLogger("bete_bot")

TOKEN_ENV = "BETE_TOKEN"


@dataclass(frozen=True)
class Credentials:
    """A bot's identity at one server. ``bot_id`` is empty when the token came from the environment."""

    token: str
    bot_id: str = ""
    source: str = ""


def default_token_file(target: str, name: str) -> Path:
    """``$XDG_CONFIG_HOME/bete/tokens/<server>/<name>.json`` (one token per server and bot name)."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in target)
    return base / "bete" / "tokens" / safe / f"{name}.json"


async def token_is_valid(target: str, token: str, timeout: float = DEFAULT_TIMEOUT) -> bool:
    """Asks the server whether it knows the token (a one-table ListTables)."""
    async with open_channel(target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        try:
            await stub.ListTables(
                table_service_pb2.ListTablesRequest(page_size=1),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=timeout,
            )
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.UNAUTHENTICATED:
                return False
            raise BeteError.from_rpc_error(e) from None
    return True


async def obtain_token(
    target: str,
    name: str,
    owner: str = "",
    token_file: Optional[Path] = None,
    *,
    use_env: bool = True,
) -> Credentials:
    """Returns a usable token for ``name`` at ``target``.

    Order: ``BETE_TOKEN`` (trusted as given), then the saved file if the server still knows it
    (a server with a fresh data folder forgets every bot), else ``RegisterBot`` and save.
    """
    env = os.environ.get(TOKEN_ENV, "").strip() if use_env else ""
    if env:
        return Credentials(token=env, source=TOKEN_ENV)
    path = token_file or default_token_file(target, name)
    if path.exists():
        try:
            saved = json.loads(path.read_text())
            if await token_is_valid(target, saved["token"]):
                return Credentials(token=saved["token"], bot_id=saved.get("bot_id", ""), source=str(path))
            log.info("saved token in %s is unknown to %s; registering again", path, target)
        except (ValueError, KeyError, TypeError) as e:
            log.warning("ignoring unreadable token file %s: %s", path, e)
    bot_id, token = await register_bot(target, name, owner)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"server": target, "name": name, "bot_id": bot_id, "token": token}, f)
    log.info("registered bot %s as %s; token saved in %s", name, bot_id, path)
    return Credentials(token=token, bot_id=bot_id, source="RegisterBot")
