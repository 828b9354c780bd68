"""``bete-bot --policy module:function``: any Python callable from the view to an action plays.

The callable gets the seat's ``bete.v1.SeatView`` (exactly what ``Bot.decide`` gets) and returns
one of:

- an ``int``: an action id of the fixed encoding of bete-engine's research environments
  (docs/research.md; converted with ``bete_engine.action_of``, so a policy trained in
  ``bete_engine.pettingzoo`` or ``bete_engine.openspiel`` plays unchanged);
- a ``str``: the action's RULES.md 11.3 text (``"card KS"``);
- a ``bete.v1.Action``.

``module`` is an importable module (``mypkg.policies``) or a path to a ``.py`` file; the
function may also be a class or factory called with no argument that returns the callable
(write ``module:factory()``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Callable

from .actions import Action, parse_action
from .bot import Bot, maybe_await


class PolicyError(ValueError):
    """A --policy that cannot be loaded, or an answer that is not an action."""


def load_policy(spec: str) -> Callable[[Any], Any]:
    """The callable `spec` (``module:function``, ``path/to/file.py:function`` or
    ``module:factory()``) names."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise PolicyError(f"--policy wants MODULE:FUNCTION, got {spec!r}")
    call = name.endswith("()")
    name = name[:-2] if call else name
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise PolicyError(f"--policy {spec!r}: no file {path}")
            mod_name = f"bete_policy_{path.stem}"
            loader = importlib.util.spec_from_file_location(mod_name, path)
            assert loader is not None and loader.loader is not None  # a .py file always has one
            module = importlib.util.module_from_spec(loader)
            sys.modules[mod_name] = module
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ImportError as e:
        raise PolicyError(f"--policy {spec!r}: cannot import {target!r}: {e}") from e
    fn = getattr(module, name, None)
    if fn is None:
        raise PolicyError(f"--policy {spec!r}: {target!r} has no {name!r}")
    if call:
        fn = fn()
    if not callable(fn):
        raise PolicyError(f"--policy {spec!r}: {name!r} is not callable")
    return fn


class PolicyBot(Bot):
    """Plays what a policy callable answers for each view (see the module's docstring)."""

    def __init__(self, policy: Callable[[Any], Any], name: str = "py-policy") -> None:
        self.policy = policy
        self.name = name

    async def decide(self, view) -> Action:
        answer = await maybe_await(self.policy(view))
        return to_action(view, answer)


def to_action(view, answer: Any) -> Action:
    """A policy's answer as an Action; raises PolicyError naming what was wrong."""
    if isinstance(answer, Action):
        return answer
    if isinstance(answer, str):
        return parse_action(answer)
    if isinstance(answer, int) or (hasattr(answer, "__index__") and not isinstance(answer, bool)):
        try:
            import bete_engine
        except ImportError as e:
            raise PolicyError("an action id needs bete-engine (pip install the wheel)") from e
        return parse_action(bete_engine.action_of(view, int(answer)))
    kind = type(answer).__name__
    raise PolicyError(f"a policy returns an action id, an action's text or an Action, not {kind}")


def describe(fn: Callable[[Any], Any]) -> str:
    mod = inspect.getmodule(fn)
    return f"{getattr(mod, '__name__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
