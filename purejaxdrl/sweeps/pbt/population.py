"""`pbt()`: population-based training, a sweep batch with ready steps between chunks."""

import pathlib
from collections.abc import Callable, Mapping

from purejaxdrl.parallel import resume_command
from purejaxdrl.sweeps.batch import SweepStopped
from purejaxdrl.sweeps.inputs import (
    base_and_target,
    check_device_memory,
    messenger,
    running_meta,
    shown,
)
from purejaxdrl.sweeps.pbt.files import has_policy, start_pbt_dir, write_pbt
from purejaxdrl.sweeps.pbt.inputs import (
    check_keep_buffer,
    check_pbt_config,
    decay_notes,
    member_configs,
    no_exploit_note,
    unmoved_note,
)
from purejaxdrl.sweeps.pbt.layout import Fitted, fit_population
from purejaxdrl.sweeps.pbt.lineage import PBTResult, read_pbt_meta
from purejaxdrl.sweeps.pbt.operators import PBTConfig
from purejaxdrl.sweeps.pbt.train import train_population
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.run_files import holding_run_dir
from purejaxdrl.training.setup_stop import SetupHold


def pbt(
    base: TrainConfig | str,
    *,
    explore: Mapping[str, tuple[str, float, float]],
    population: int,
    algo: str | None = None,
    ready: int = 4,
    quantile: float = 0.25,
    resample_probability: float = 0.25,
    perturb: tuple[float, float] = (0.8, 1.25),
    keep_buffer: bool = False,
    search_seed: int = 0,
    target_return: float | None = None,
    write_files: bool = False,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> PBTResult:
    """Population-based training (Jaderberg et al., 2017) in one compiled program.

    The population trains as one sweep batch (`compiled.make_programs`: members
    vmapped and split over the devices). Every `ready` chunks a jitted ready
    step ranks the members by the mean return of the episodes that ended since
    the last one; each of the bottom `quantile` copies the learner state and
    configs of a random member of the top `quantile`
    (`operators.learner_mask`: its environments and key stay its own) and
    perturbs the explored fields (`operators.explore`). Nothing leaves the
    device but metrics and the lineage. With files, the population is
    checkpointed after ready steps (`checkpoint.every` of them) and
    `resume_pbt` continues a stopped run exactly.

    Args:
      base: a TrainConfig, or a preset name whose `algo` section is the base.
      explore: field -> (`loguniform` | `uniform`, low, high): the dynamic
        fields explored and their spaces; members start from draws of them.
      population: members (all must fit in memory at once).
      algo: with a preset name, the algorithm (default ppo).
      ready: chunks (of `num_logs`' schedule) between ready steps.
      quantile: share of members exploited, and of those they copy.
      resample_probability: chance a copied field is drawn afresh.
      perturb: the two factors a copied field is moved by otherwise
        (`operators.perturbed`: a loguniform field multiplied, a uniform
        one moved by a share of its space).
      keep_buffer: replay learners keep their own replay data.
      search_seed: seeds the initial draws and the ready steps' choices.
      target_return: the score final returns are judged against (a preset's
        by default).
      write_files: write a PBT directory under `base.run_dir` (`write_pbt`),
        with checkpoints while it trains.
      device_memory: bytes per device it may use (default: estimated).
      notify: called with each message (and progress line), instead of the
        console.
      console: without `notify`, print the messages and one plain progress
        line per chunk to stderr, so stdout stays the script's own (in a
        Jupyter cell to stdout, where `pjd.train` draws); False: silent.

    Returns:
      A PBTResult: members' records and final parameters, and the lineage.

    Examples:
      More in docs/guide/pbt.md.

      >>> import purejaxdrl as pjd
      >>> explore = {"learning_rate": ("loguniform", 1e-5, 1e-3)}
      >>> result = pjd.pbt("cartpole", explore=explore, population=4)

    Raises:
      ConfigError: bad fields, ranges or settings, or a population that does
        not fit in memory (nothing has trained yet).
      SweepStopped: with `write_files`, a signal (SIGINT, SIGTERM) stopped it
        once the chunks under way finished (the current one and, where it
        was queued, the next), saved; `resume_pbt(e.path)` continues it.
        One while it set up stops it before its first chunk (update 0).
      KeyboardInterrupt: a signal before its directory was made, or, without
        `write_files`, before its first chunk: nothing was saved.

    """
    # A signal from here on is a request (`SetupHold`): before the folder is
    # made it stops the run untouched; then its chunk loop takes it over.
    with SetupHold() as held:
        base, target_return = base_and_target(base, algo, target_return)
        check_device_memory(device_memory)
        config = PBTConfig(
            ready,
            quantile,
            resample_probability,
            tuple(perturb) if isinstance(perturb, tuple | list) else perturb,
            keep_buffer,
        )
        check_pbt_config(config, population)
        check_keep_buffer(config, base)
        configs, fields = member_configs(base, explore, population, search_seed)
        notify = shown(notify, console)
        messages, say = messenger(notify)
        result = PBTResult(
            base=base,
            fields=fields,
            config=config,
            population=population,
            histories=[[] for _ in range(population)],
            diverged=[None] * population,
            lineage=[],
            final_params=[None] * population,
            target_return=target_return,
            search_seed=search_seed,
            messages=messages,
        )
        # Laid out before its directory exists: one that does not fit leaves none.
        fitted = fit_population(result, configs[0], device_memory)
        # After every check: a refusal stays one line.
        note = no_exploit_note(config, population, base.num_updates, base.num_logs)
        notes = [note, unmoved_note(config), *decay_notes(base, fields)]
        for line in filter(None, notes):
            say(line)
        held.stop_if_asked(None)  # no folder yet: nothing to leave
        if write_files:
            path = start_pbt_dir(result)
            again = resume_command("pbt", path, devices=base.devices)
            say(
                f"pbt: writing {path} (if stopped, `{again}` "
                f"continues it, pjd.resume_pbt({str(path)!r}) in Python)"
            )
        return _train(result, configs, fitted, say, notify)


def resume_pbt(
    path: str | pathlib.Path,
    *,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> PBTResult:
    """Continues a PBT run that was stopped (killed, or its machine lost).

    It restarts from the newest checkpoint (taken after a ready step; from
    the start if there is none) and ends with the parameters, records and
    lineage of the run straight through.

    Args:
      path: the PBT directory (`pbt(..., write_files=True)`).
      device_memory: as `pbt`'s.
      notify: called with each message (and progress line), instead of the
        console.
      console: without `notify`, print the messages and one plain progress
        line per chunk to stderr, so stdout stays the script's own (in a
        Jupyter cell to stdout, where `pjd.train` draws); False: silent.

    Raises:
      ConfigError: not a PBT directory, a finished one, or fewer devices
        than it was laid out on (more are fine: it keeps its layout).
      SweepStopped: a signal (SIGINT, SIGTERM) stopped it once the chunks
        under way finished, saved; `resume_pbt(e.path)` continues it.

    Examples:
      More in docs/guide/pbt.md.

      >>> import purejaxdrl as pjd
      >>> explore = {"learning_rate": ("loguniform", 1e-5, 1e-3)}
      >>> try:
      ...     result = pjd.pbt(
      ...         "cartpole", explore=explore, population=4, write_files=True
      ...     )
      ... except pjd.SweepStopped as stopped:  # Ctrl-C or SIGTERM, saved
      ...     result = pjd.resume_pbt(stopped.path)

    """
    path = pathlib.Path(path).absolute()  # its records name it from anywhere
    # A signal from here on is a request (`SetupHold`), which the chunk loop
    # takes over: the run stops before its first chunk, its folder as it was.
    with SetupHold():
        running_meta(path, "pbt", "PBT run", "writing DIR", "lineage.csv")
        result = read_pbt_meta(path)
        notify = shown(notify, console)
        messages, say = messenger(notify)
        result.messages = messages
        explore = {f.name: (f.kind, f.low, f.high) for f in result.fields}
        configs, _ = member_configs(
            result.base, explore, result.population, result.search_seed
        )
        say(f"pbt: resuming {path}")
        fitted = fit_population(result, configs[0], device_memory)
        return _train(result, configs, fitted, say, notify)


@holding_run_dir  # one process trains a PBT directory at a time
def _train(
    result: PBTResult,
    configs: list[TrainConfig],
    fitted: Fitted,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> PBTResult:
    """Trains the population, then writes its directory (if it has one).

    `pbt.yaml` is marked finished only once every result is written
    (`write_pbt`): a run killed before that resumes and writes them again.

    Raises:
      SweepStopped: a signal stopped it, saved; with its directory as `path`.

    """
    try:
        train_population(result, configs, fitted, say, progress)
    except SweepStopped as e:
        raise SweepStopped(
            e.reason, result.run_dir, "pbt", configs[0].devices
        ) from None
    for member, at in enumerate(result.diverged):
        if at is not None:
            say(
                f"pbt: member {member} diverged at update {at} (a metric turned "
                "NaN or infinite) and no ready step replaced it since: its final "
                "return is not counted"
            )
    if result.run_dir is not None:
        path = write_pbt(result)  # with the best member's policy
        if has_policy(result):
            say(
                f"pbt: results in {path}; the best member's policy in {path / 'policy'}"
            )
        else:
            say(f"pbt: results in {path}; no member ended with a finite return, so "
                "no policy is written")  # fmt: skip
    return result
