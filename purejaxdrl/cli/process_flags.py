"""`purejaxdrl train`'s flags of a run over many hosts (one process each)."""

import argparse

from purejaxdrl.cli.parser import int_flag


def add_process_flags(parser: argparse.ArgumentParser) -> None:
    """The "many hosts" group: --coordinator, --num-processes, --process-id, ..."""
    from purejaxdrl.cli.process_config import DEFAULT_INIT_TIMEOUT

    multi = parser.add_argument_group(
        "many hosts",
        "Run the same command on every host, each with its own --process-id; "
        "only process 0 prints and writes files, but every process must see the "
        "same --run-dir (a shared filesystem: they all checkpoint) unless "
        "--no-files.",
    )
    multi.add_argument(
        "--coordinator", metavar="HOST:PORT", help="process 0's address and a free port"
    )
    multi.add_argument("--num-processes", type=int_flag, metavar="INT")
    multi.add_argument("--process-id", type=int_flag, metavar="INT")
    multi.add_argument(
        "--distributed-auto",
        action="store_true",
        help="detect the cluster (SLURM, Cloud TPU, Open MPI) instead",
    )
    multi.add_argument(
        "--init-timeout",
        type=int_flag,
        metavar="SECONDS",
        default=DEFAULT_INIT_TIMEOUT,
        help="how long each process waits for all of them to join before it "
        "stops with an error (default: %(default)s)",
    )
