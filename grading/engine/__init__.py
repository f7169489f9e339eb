"""The judge's side of grading: schedule files onto warm workers, start those workers in the sandbox, check what
they send back. Runs in the judge's process only."""
