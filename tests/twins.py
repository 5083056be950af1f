"""What a differential test compares of two runs of the same manifest (a fast path and its
plain twin): the events as the wire shows them, the summary and the log, with what differs
from run to run (ids, times, durations, the scratch directory) taken out."""
from __future__ import annotations

import json
import re


def wire(root, event):
    """``event.to_dict()`` as JSON, without its id, times and duration, ``root`` as ROOT."""
    d = event.to_dict()
    for key in ("event_id", "timestamp", "duration"):
        d.pop(key)
    if d.get("status"):
        d["status"].pop("timestamp")
        d["status"].get("metadata", {}).pop("mtime", None)
    return re.sub(re.escape(str(root)), "ROOT", json.dumps(d))


def summary(result):
    """The run's summary without its times and durations."""
    return {k: v for k, v in result.summary.to_dict().items() if "time" not in k and "duration" not in k}


def tree_state(root):
    """The files left under ``root``: each name (relative) with its text and mode."""
    import os

    out = {}
    for dirpath, _dirs, files in os.walk(str(root)):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as fh:
                out[os.path.relpath(path, str(root))] = (fh.read(), oct(os.stat(path).st_mode & 0o777))
    return dict(sorted(out.items()))


def log_text(root, text):
    """Log lines without runtimes, ``root`` as ROOT."""
    return re.sub(r"runtime=\S+", "", text).replace(str(root), "ROOT")
