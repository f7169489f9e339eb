"""Everything that runs inside the sandbox: the warm worker, the child it forks per learner file, the guard, the
wire format, the learner-side calls and what inputs are made of. bubblewrap mounts this folder (and nothing else
of grading/) read-only, so nothing here may hold a check or a reference answer, or import grading.checks."""
