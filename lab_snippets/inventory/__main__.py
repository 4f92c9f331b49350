"""``python -m lab_snippets.inventory scan|render|regenerate``."""

import sys

from lab_snippets.inventory import main

sys.exit(main())
