"""``python -m lab_snippets.sites check|fetch|relocate``: the call-site admin command line."""

import sys

from lab_snippets.sites.admin import main

sys.exit(main())
