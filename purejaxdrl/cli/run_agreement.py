"""What the processes of a multi-process `train` compare before they train.

Each process resolves its run from its own flags; `agree_on_run` stops every
process with one line (status 2) unless all resolved the same one.
"""

import argparse
import json
import pathlib
from typing import Any

from purejaxdrl.cli.args import UsageError
from purejaxdrl.cli.processes import leave_together
from purejaxdrl.config_types import flat_fields
from purejaxdrl.coordination import gather_text


def agree_on_run(args: argparse.Namespace, config: Any) -> None:
    """Raises a UsageError on every process unless all resolved the same run.

    Each process reads its own flags: one that differs would train its own
    replica of the learner differently (silently) or compile other shapes
    (a crash in a collective). `run_dir` may differ: process 0's is used.
    So may the spelling of `--resume`'s folder, but not whether the process
    resumes, nor the newest checkpoint it sees there: a fresh process and a
    resumed one, or two restoring other updates, run other collectives and
    wait in them for ever.
    """
    mine = {path: value for path, _, value in flat_fields(config)}
    mine |= {"--no-files": args.no_files, "--override": args.override}
    mine.pop("run_dir", None)
    resume = None
    if args.resume is not None:
        resume = {"dir": str(args.resume), "newest": _newest_checkpoint(args.resume)}
    # The texts are compared as dicts (`_disagreement`), so key order (env.options
    # given in another order) never makes processes disagree; the fields keep
    # `flat_fields`' order (env.id, ..., algo before any algorithm's section),
    # so the first that differs is the one a user typed: not `a2c.entropy_cost`
    # (A2C's preset, which a PPO process never trains) where `algo` differs.
    text = json.dumps({"config": mine, "resume": resume}, default=str)
    problem = _disagreement([json.loads(t) for t in gather_text("config", text)])
    if problem:
        leave_together()  # every process is here: none may exit before the rest
        raise UsageError(problem)


def _newest_checkpoint(run_dir: str) -> int | None:
    """The newest update saved in `run_dir`'s checkpoints, None without one.

    orbax writes each under a temporary name, renamed to its update once
    complete.
    """
    saved = pathlib.Path(run_dir, "checkpoints").glob("*")
    return max((int(p.name) for p in saved if p.name.isdigit()), default=None)


def _disagreement(runs: list[dict]) -> str | None:
    """Why the processes' `runs` (`agree_on_run`'s) cannot train together."""
    same = "give every process the same --resume RUN_DIR (a shared filesystem)"
    zero, resumes = runs[0], [run["resume"] for run in runs]
    for p, resume in enumerate(resumes):
        if (resume is None) != (resumes[0] is None):
            what = [
                "starts a new run" if r is None else f"resumes {r['dir']}"
                for r in (resume, resumes[0])
            ]
            return (
                f"process {p} {what[0]} but process 0 {what[1]}; {same}, or "
                "none to start a new run."
            )
    for p, resume in enumerate(resumes):
        if resume is not None and resume["newest"] != resumes[0]["newest"]:
            at = [
                f"{r['dir']}, whose newest checkpoint is "
                + ("none" if r["newest"] is None else f"update {r['newest']:,}")
                for r in (resume, resumes[0])
            ]
            return f"process {p} resumes {at[0]} but process 0 {at[1]}; {same}."
    for p, run in enumerate(runs):
        a, b = zero["config"], run["config"]
        differ = [k for k in [*a, *b] if a.get(k, "(none)") != b.get(k, "(none)")]
        if differ:
            key = differ[0]
            return (
                f"process {p}'s config differs from process 0's: {key} "
                f"{b.get(key, '(none)')} vs {a.get(key, '(none)')}; run every "
                "process with the same flags."
            )
    return None
