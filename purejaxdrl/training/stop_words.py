"""What a process says when SIGINT / SIGTERM asks it to stop, and when again.

`faults.StopSignals` says one line per signal it acts on; these build them,
each true to what the process then does.
"""

from purejaxdrl.observe.progress import in_notebook

# A repeat this soon is the same signal sent twice: coreutils' `timeout` sends
# it to the process and then to its process group.
SAME_SIGNAL = 1.0
# Seconds a process of many has, after a second signal, to end itself (its
# stop under way finishing) before `cli.second_signal` ends it.
GRACE = 2.0


def when(before_training: bool, host_envs: bool = True) -> str:
    """When a stop asked for now takes effect.

    `host_envs`: the run may step host environments, which stop after the
    update under way (False: a sweep or PBT run, which refuses them).
    """
    if before_training:
        return "before the first chunk"
    host = "; on host environments, the update under way" if host_envs else ""
    return (
        f"once the chunks under way finish (one, or two where the next is queued{host})"
    )


def first(
    name: str, before_training: bool, saves: bool, peer: bool, host_envs: bool = True
) -> str:
    """The line for a first signal `name` (SIGINT, SIGTERM), without its tail.

    Args:
      name: the signal's name.
      before_training: the run has not started its first chunk.
      saves: the stop saves a checkpoint (False: a run without files).
      peer: a process other than 0 of a run of many, which stops with the
        others and prints nothing else: process 0 reports the stop.
      host_envs: as `when` takes it.

    """
    head = f"purejaxdrl: {name} received: "
    stops = when(before_training, host_envs)
    if peer:
        report = (
            "process 0 says when the checkpoint is saved and prints the resume command"
            if saves
            else "nothing is saved; process 0 says where they stopped"
        )
        return f"{head}stopping with the other processes {stops}; {report}"
    if saves:
        return f"{head}saving a checkpoint {stops}, then stopping"
    return f"{head}stopping {stops}"


def ctrl_c(name: str, saves: bool, second_ends: bool) -> str:
    """The first SIGINT line's tail: what Ctrl-C again does ("" for SIGTERM).

    Args:
      name: the signal's name.
      saves: the stop saves a checkpoint.
      second_ends: a second signal ends the process after `GRACE` s
        (`cli.second_signal`); else a second SIGINT aborts at once.

    """
    if name != "SIGINT":
        return ""
    if second_ends:
        return (
            f" (Ctrl-C again, a second or more later, ends this process within "
            f"{GRACE:g} s)"
        )
    # A Jupyter kernel has no Ctrl-C: its interrupt sends the SIGINT.
    again = "interrupt again" if in_notebook() else "Ctrl-C again"
    return f" ({again} aborts{_skipped(saves)})"


def _skipped(saves: bool) -> str:
    """What an abort leaves: the stop's own save, never the saved checkpoints.

    "Without saving" alone read as if the run had no checkpoint at all.
    """
    if not saves:
        return ""
    return " without the stop's save; checkpoints already written are kept"


def again(name: str, before_training: bool, saves: bool, host_envs: bool = True) -> str:
    """The line for a repeated SIGTERM, which changes nothing: the stop goes on.

    The first line again would read as a second request (or a second save).
    `host_envs` as `when` takes it.
    """
    # `when` brackets its own aside: bracketing it again nested them.
    return (
        f"purejaxdrl: {name} received again: already stopping "
        f"{when(before_training, host_envs)}; Ctrl-C aborts{_skipped(saves)}"
    )


def ending(name: str, saves: bool) -> str:
    """The line for a second signal that ends a process of many in `GRACE` s.

    The stop under way may still finish first (its save, then the process's
    own exit): the line says so rather than promise or deny a checkpoint.
    """
    if saves:
        unless = "without saving, unless the stop under way has saved its checkpoint"
    else:
        unless = "unless the stop under way has ended it"
    return (
        f"purejaxdrl: {name} received again: ending this process in {GRACE:g} s, "
        f"{unless} by then"
    )
