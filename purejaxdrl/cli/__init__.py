"""The `purejaxdrl` command: one module per sub-command.

`purejaxdrl train | sweep | eval | export | plot | list`. Each sub-command's
module turns its arguments into typed configs and calls the library; argument
helpers shared by several sub-commands live in `cli.args`. This is the top
layer: it may import every other part of the package, and nothing imports it.
"""

from purejaxdrl.cli.commands import main

__all__ = ["main"]
