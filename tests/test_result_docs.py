"""The public records a user reads document every field (and the donation trap)."""

import dataclasses

from purejaxdrl.agents.base import RunShape
from purejaxdrl.config_docs import attribute_docs, field_docs
from purejaxdrl.training.result import TrainResult


def test_train_result_documents_every_field_and_that_chunk_donates_its_state():
    docs = field_docs(TrainResult)
    assert set(docs) == {f.name for f in dataclasses.fields(TrainResult)}
    # A notebook that trains on from result.state with a runner's chunk
    # deletes the parameters `policy()` reads, unless it passes a copy.
    assert "donates" in docs["state"]
    assert "jax.tree.map(jnp.copy, result.state)" in docs["state"]


def test_run_shape_documents_every_field():
    # A user's agent factory reads `run`: every field is described.
    assert set(attribute_docs(RunShape)) == set(RunShape._fields)
