"""`python -m purejaxdrl ...`: the same as the `purejaxdrl` command."""

import sys

from purejaxdrl.cli import main

sys.exit(main())
