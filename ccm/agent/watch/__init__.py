"""Drift watch (issue 29): the agent watches what it manages and re-applies what drifted.

``inotify`` is the libc seam (ctypes, no dependency); ``targets`` turns a run's events
into the paths to watch (pure); ``backoff`` keeps a resource that is fought over from
becoming a busy loop (pure); ``watcher`` is the per-manifest thread that arms the
watches after an apply, debounces events and asks the worker for a re-apply of the
affected resources. The decision which resources a re-apply runs is the engine's
(``ccm.apply.engine.select_resources``).
"""
