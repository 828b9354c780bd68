"""``python -m bete_bot --server HOST:PORT [--ruleset R --seats N --tables K | --ladder ID --matches N] [--bot random|rule_aware]``."""

import sys

from .play import main

sys.exit(main())
