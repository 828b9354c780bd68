"""bete-bot: write a bot for the bete card-game server in a few lines.

    from bete_bot import Bot, main

    class MyBot(Bot):
        def decide(self, view):
            return view.legal_actions[0]

    main(MyBot())
"""

from . import cards
from .actions import (
    Action,
    ActionError,
    action_text,
    card,
    challenge,
    contre,
    decline,
    discard,
    drop,
    exchange,
    general,
    hidden,
    parse_action,
    pass_,
    play,
    same_action,
    stand,
    verb,
    widow,
)
from .auth import Credentials, obtain_token
from .bot import Bot, SeatView
from .bots import RandomBot, RuleAwareBot
from .client import Client, create_account, register_bot, rotate_token
from .errors import BeteError
from .play import main
from .play import play as play_match
from .play import play_ladder
from .runner import Runner, TableState
from .tls import Tls

__version__ = "0.1.0"

__all__ = [
    "Action", "ActionError", "BeteError", "Bot", "Client", "Credentials", "RandomBot", "Runner",
    "RuleAwareBot", "SeatView", "TableState", "Tls", "action_text", "card", "cards", "challenge", "contre",
    "create_account", "decline", "discard", "drop", "exchange", "general", "hidden", "main", "obtain_token",
    "parse_action", "pass_", "play", "play_ladder", "play_match", "register_bot", "rotate_token", "same_action",
    "stand", "verb", "widow",
]
