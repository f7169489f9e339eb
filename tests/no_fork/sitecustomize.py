"""On PYTHONPATH, makes this Python look like Windows' for the grading code: no os.fork, no os.forkpty.
Used by `python course.py test` (and tests/test_spawn_backend.py) to prove the spawn backend needs neither."""
import os

for _name in ("fork", "forkpty"):  # not register_at_fork: torch calls it wherever sys.platform is not win32
    if hasattr(os, _name):
        delattr(os, _name)
