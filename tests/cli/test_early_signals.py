"""A signal in a `purejaxdrl train`'s first seconds stops it, with its line.

The hold began in `train()`: a Ctrl-C while the command read its flags or
imported JAX landed in a gc callback, was dropped, and the run trained to its
end; a SIGTERM ended it with status 143 and no line (reviews/ck17.md #1).
Each signal here is sent from a gc callback at a fixed point of the
command's setup: no timing race.
"""

import pytest

from tests.helpers import assert_signal_stops_the_command_untouched

pytestmark = pytest.mark.timeout(300)


# add_process_flags: before JAX is imported; _fresh: while the config is built.
@pytest.mark.parametrize(
    "name, where",
    [("SIGINT", "add_process_flags"), ("SIGTERM", "add_process_flags"),
     ("SIGINT", "_fresh"), ("SIGTERM", "_fresh")],
)  # fmt: skip
def test_a_signal_while_the_command_starts_stops_it_untrained(tmp_path, name, where):
    assert_signal_stops_the_command_untouched(
        tmp_path / "runs", "purejaxdrl.cli.train", name, where, ["train"]
    )
