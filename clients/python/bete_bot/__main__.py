"""``python -m bete_bot --server HOST:PORT [--ruleset R --seats N --tables K --bot random|rule_aware]``."""

import sys

from .play import main

sys.exit(main())
