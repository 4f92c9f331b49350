"""``python -m lab_snippets.labs release|validate|grade``."""

import sys

from lab_snippets.labs import main

sys.exit(main())
