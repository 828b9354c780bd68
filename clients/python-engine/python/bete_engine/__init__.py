"""The bete referee's own rules engine (the Rust crate bete-rules), for Python bots.

The compiled module is `bete_engine.bete_engine`; its names are this package's. The research
environments are the submodules `bete_engine.pettingzoo` and `bete_engine.openspiel` (each
imports its framework, installed separately: the extras `pettingzoo` and `openspiel`).
"""

from . import bete_engine as _native
from .bete_engine import *  # noqa: F401,F403

__doc__ = _native.__doc__ or __doc__
__all__ = list(_native.__all__)
