"""When a run checkpoints: `TrainConfig.checkpoint` (`checkpoint.py` saves)."""

import dataclasses

from purejaxdrl.config import ConfigError


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckpointConfig:
    """When to checkpoint a run that writes a run directory.

    Attributes:
      every: a save is due every N chunks of updates (and always at the end,
        and on SIGINT / SIGTERM); 0 saves only then. A due save that finds the
        previous one still waiting for the writer replaces it, so saves never
        hold training back; the save at the end and on a signal is written.
      keep: how many of the newest checkpoints to keep.
      keep_best: also keep the checkpoint with the best mean episode return
        of its chunk.
      wait: write every due save instead: training waits while one save is
        written and the next waits (a run goes at the pace of its saves).
        Sweeps and PBT always write every save, and refuse it.

    """

    every: int = 1
    keep: int = 3
    keep_best: bool = False
    wait: bool = False

    def check(self) -> None:
        """Raises ConfigError for a bad `every` or `keep`, naming the fix."""
        if self.every < 0:
            raise ConfigError(
                # One rule for train, sweep and pbt: each reads N its own way.
                f"checkpoint.every={self.every} must be >= 0 (a save after every "
                "N-th chunk, a PBT run's after every N-th ready step; 0: none on "
                "the way, only when SIGINT/SIGTERM stops it and, in train, at "
                "the end); pass e.g. --checkpoint.every 1 (checkpoint.every=1 in "
                "Python)."
            )
        if self.keep < 1:
            raise ConfigError(
                f"checkpoint.keep={self.keep} must be >= 1 (how many of the "
                "newest checkpoints to keep); pass e.g. --checkpoint.keep 3 "
                "(checkpoint.keep=3 in Python)."
            )
