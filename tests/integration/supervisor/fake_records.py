"""What the stand-in children and the supervisor test both read: the JSON
records the stand-ins leave in the state directory, and the /proc status of
a pid. Unlike fake_common, it needs no $FAKE_STATE_DIR, so test_supervisor
imports it too.
"""

import json
import os


def proc_stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name, state first; OSError once `pid` is reaped."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone: it has exited)."""
    try:
        return proc_stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def read_records(state_dir: str, role: str | None = None, name: str | None = None) -> list[dict]:
    """The records of every stand-in run so far (only `role`'s / `name`'s if given), oldest first."""
    out = []
    for fname in os.listdir(state_dir):
        if fname.endswith(".json"):
            with open(os.path.join(state_dir, fname)) as f:
                rec = json.load(f)
            if (role is None or rec["role"] == role) and (name is None or rec["name"] == name):
                out.append(rec)
    return sorted(out, key=lambda r: r["started"])
