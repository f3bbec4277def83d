"""What the replay tests share: the two transition buffers, and a refusal's line."""

import pytest

from purejaxdrl.replay import make_prioritised_buffer, make_uniform_buffer

# Each test of `add`'s rules runs on both transition buffers (capacity 8, batch 4).
BUFFERS = pytest.mark.parametrize(
    "make",
    [lambda: make_uniform_buffer(8, 4), lambda: make_prioritised_buffer(8, 4)],
    ids=["uniform", "prioritised"],
)


def refusal(call, *args) -> str:
    """The ValueError `call(*args)` raises, held to one line."""
    with pytest.raises(ValueError) as error:
        call(*args)
    message = str(error.value)
    assert "\n" not in message
    return message
