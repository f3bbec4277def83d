"""The command's exit statuses, apart from 0 (done) and 130 (interrupted).

A module of their own, importing nothing: `purejaxdrl --help` and an unknown
sub-command's error return them without loading the sub-commands' helpers
(and with them JAX).
"""

EXIT_USAGE = 2  # bad input: the one-line error says the fix
EXIT_FAILURE = 1  # the run failed: a bug, or the user's code raised
