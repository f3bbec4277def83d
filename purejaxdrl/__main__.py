"""`python -m purejaxdrl ...`: the same as the `purejaxdrl` command."""

import sys

from purejaxdrl.cli import main

if __name__ == "__main__":  # imported (a walk over the package's modules): nothing
    sys.exit(main())
