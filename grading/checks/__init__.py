"""The course's checks: one module or package per chapter (chNN_topic), each defining CHAPTER. Loaded in the
judge's process only (grading.catalog.load_chapters), never in the sandbox."""
