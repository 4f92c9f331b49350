"""``python -m lab_snippets.inventory scan|render|regenerate``."""

import sys

from lab_snippets.inventory.cli import main

sys.exit(main())
