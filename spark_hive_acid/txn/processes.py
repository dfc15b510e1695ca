"""Is a process still the one we watched? (pid reuse, zombies, no ``/proc`` on macOS)."""
from __future__ import annotations

import os
import subprocess
from typing import NamedTuple, Optional


class ProcessInfo(NamedTuple):
    command: str  # the executable's short name
    parent: int
    start: Optional[int]  # start time in clock ticks since boot (None where unknown)


def process_info(pid: int) -> Optional[ProcessInfo]:
    """``(command name, parent pid, start time)`` of a running process; None if it is gone (or a
    zombie: it has ended, only nobody reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("utf-8", "replace")
        comm = data[data.index("(") + 1:data.rindex(")")]
        rest = data[data.rindex(")") + 2:].split()
        if rest[0] in ("Z", "X", "x"):
            return None
        return ProcessInfo(comm, int(rest[1]), int(rest[19]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, IndexError):
        pass
    try:  # no /proc (macOS ...)
        out = subprocess.run(["ps", "-o", "ppid=,state=,comm=", "-p", str(pid)],
                             capture_output=True, text=True, timeout=10)
        fields = out.stdout.split(None, 2)
        if len(fields) < 3 or fields[1].startswith("Z"):
            return None
        return ProcessInfo(os.path.basename(fields[2].strip()), int(fields[0]), None)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def this_process() -> tuple[int, Optional[int]]:
    """``(pid, start time)`` of the calling process."""
    info = process_info(os.getpid())
    return os.getpid(), info.start if info else None


def is_alive(pid: int, start: Optional[int]) -> bool:
    """True while ``pid`` runs (not a zombie) and, if ``start`` is known, is the same process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    info = process_info(pid)
    if info is None:
        return False
    return start is None or info.start is None or info.start == start  # else the pid was reused
