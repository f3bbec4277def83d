"""How a process joins a multi-process run: its flags, checked before it joins.

`DistributedConfig` holds `train`'s process flags (`process_flags`); its
checks raise a ValueError naming the flag, the rule and the fix (exit status
2 from the CLI) before `jax.distributed` is started (`processes`).
"""

import dataclasses
import errno
import socket

# A process that stops answering is declared dead after this many seconds; the
# coordination service then stops every other process with an error instead of
# letting it wait forever in a collective. JAX's default is 100 s.
DEFAULT_HEARTBEAT_TIMEOUT = 20
# How long a process waits for all the others to join before it gives up. Hosts
# of a cluster rarely start the command within seconds of each other; JAX's
# default is 300 s.
DEFAULT_INIT_TIMEOUT = 120


@dataclasses.dataclass(frozen=True)
class DistributedConfig:
    """How this process joins a multi-process run (all None: a single process).

    Attributes:
      coordinator: "host:port" of process 0's coordination service.
      num_processes: number of processes in the run.
      process_id: this process's index in [0, num_processes).
      auto: let `jax.distributed.initialize()` detect the cluster (SLURM,
        Cloud TPU, Open MPI) instead of naming it.
      heartbeat_timeout: seconds of silence after which a process is declared
        dead and the run stops.
      init_timeout: seconds this process waits for every process to join
        before it stops with an error.

    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    auto: bool = False
    heartbeat_timeout: int = DEFAULT_HEARTBEAT_TIMEOUT
    init_timeout: int = DEFAULT_INIT_TIMEOUT

    @property
    def enabled(self) -> bool:
        """Whether this describes a multi-process run (any of its flags given)."""
        named = (self.coordinator, self.num_processes, self.process_id)
        return self.auto or any(x is not None for x in named)


def check_before_joining(config: DistributedConfig) -> None:
    """Raises a ValueError naming the flag when `config` cannot join a run.

    The flags must describe a run, and process 0 must be able to host its
    coordination service on the port (`check_port_free`).
    """
    check_flags(config)
    if not config.auto and config.process_id == 0:
        check_port_free(config.coordinator)


def check_flags(config: DistributedConfig) -> None:
    """Raises a ValueError naming the flag when the flags cannot describe a run."""
    if config.init_timeout < 1:
        raise ValueError(
            f"--init-timeout {config.init_timeout} must be >= 1 (seconds to "
            f"wait for every process to join; default {DEFAULT_INIT_TIMEOUT})."
        )
    if config.auto:
        return
    named = (config.coordinator, config.num_processes, config.process_id)
    if None in named:
        raise ValueError(
            "--coordinator, --num-processes and --process-id go together: "
            f"got coordinator={config.coordinator}, num_processes="
            f"{config.num_processes}, process_id={config.process_id}; give "
            "all three (or --distributed-auto on SLURM / Cloud TPU)."
        )
    host, _, port = config.coordinator.rpartition(":")
    if ":" not in config.coordinator:  # a host alone
        host, port = config.coordinator, ""
    valid_port = port.isdigit() and 1 <= int(port) <= 65535
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        # `::1` split as host ':' and port 1: an IPv6 host needs brackets.
        host, valid_port = f"[{config.coordinator}]", False
    if not host or not valid_port:
        # Only a port given (`:1234`): the host is what is missing.
        example = f"{host or 'HOSTNAME_OF_PROCESS_0'}:{port if valid_port else 1234}"
        raise ValueError(
            f"--coordinator {config.coordinator} must be HOST:PORT, a port "
            "from 1 to 65535 on process 0's host; e.g. --coordinator "
            f"{example}."
        )
    if config.num_processes < 1:
        raise ValueError(
            f"--num-processes {config.num_processes} must be >= 1 (the number "
            "of processes of the run, one per host)."
        )
    if not 0 <= config.process_id < config.num_processes:
        raise ValueError(
            f"--process-id {config.process_id} must be in [0, "
            f"{config.num_processes}) for --num-processes "
            f"{config.num_processes}; number processes from 0."
        )


def check_port_free(coordinator: str) -> None:
    """Raises a ValueError when process 0 cannot bind `coordinator`'s port.

    JAX's coordination service binds it on every address (`[::]`) with
    SO_REUSEPORT: a port another program holds made JAX crash (a segfault),
    and one that another purejaxdrl run's coordinator holds was shared, the
    newcomer registering as that run's process 0, which aborted the running
    job. A bind without SO_REUSEPORT fails against both; SO_REUSEADDR lets it
    pass a port whose connections are only closing (a run that just ended).
    A small race remains: another program may take the port after this test.
    """
    port = int(coordinator.rpartition(":")[2])
    families = [(socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6:
        families.append((socket.AF_INET6, "::"))
    for family, address in families:
        try:
            probe = socket.socket(family, socket.SOCK_STREAM)
        except OSError:  # no IPv6 on this host
            continue
        with probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # IPv4 was tested on its own
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind((address, port))
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    continue  # no such address here, or a privileged port: JAX says
                raise ValueError(
                    f"--coordinator {coordinator}: port {port} is in use on this "
                    "host (another run's coordinator, or another program); pick a "
                    "free port, the same --coordinator for every process."
                ) from None
