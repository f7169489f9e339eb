"""Time limits the judge and the worker share (the judge waits a little longer than the worker allows)."""

IMPORT_TIMEOUT_S = 120.0  # importing the learner's file, before any exercise starts
SETUP_TIMEOUT_S = 60.0  # copying one exercise's inputs (outside its own time limit)
DEPENDENT_TIMEOUT_S = 10.0  # the limit of an exercise that calls the learner's own function that timed out
