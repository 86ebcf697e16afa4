"""Samples the memory of a process tree until told to stop, then prints its peak.

Usage: peak_memory.py ROOT_PID OUT_FILE [PID_FILE...]

Every half second it sums the resident set size of ROOT_PID, all of its descendants, and the
processes named by the PID files (the emulator, which detaches from the tree that started it).
On SIGTERM or SIGINT it writes the peak in bytes to OUT_FILE and exits. Shared pages are counted
once per process, so the figure errs high, never low.
"""

import os
import signal
import sys
import time


def children_of() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def pids_from(files: list[str]) -> list[int]:
    pids = []
    for path in files:
        try:
            with open(path) as pid_file:
                pids.append(int(pid_file.read().strip()))
        except (OSError, ValueError):
            continue
    return pids


def tree_rss(root: int, extra: list[int]) -> int:
    children = children_of()
    seen, stack, total = set(), [root, *extra], 0
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += rss_bytes(pid)
        stack.extend(children.get(pid, []))
    return total


def main() -> None:
    root, out, pid_files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    peak = 0

    def finish(*_):
        with open(out, "w") as result:
            result.write(f"{peak}\n")
        sys.exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    while True:
        peak = max(peak, tree_rss(root, pids_from(pid_files)))
        if not os.path.exists(f"/proc/{root}"):
            finish()
        time.sleep(0.5)


if __name__ == "__main__":
    main()
