"""What /proc says of running processes, for tests and the benchmark scripts: memory fields of
`/proc/PID/status` (summed over a process group such as nginx's master and workers), resetting the peak RSS,
descriptor counts."""

from __future__ import annotations

import os
from collections.abc import Iterable


def _pids(pids: int | Iterable[int]) -> Iterable[int]:
    return (pids,) if isinstance(pids, int) else pids


def status_kib(pids: int | Iterable[int], field: str) -> int:
    """A `/proc/PID/status` field in KiB (`VmRSS`, `VmHWM`), summed over `pids`; 0 for a process without it."""
    total = 0
    for pid in _pids(pids):
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
                    break
    return total


def reset_peak_rss(pids: int | Iterable[int]) -> None:
    """Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0); ignored where not permitted."""
    for pid in _pids(pids):
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass


def process_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))

