"""Your exercise files, one per chapter: fill in the functions, then `check("name")` in the notebook.

In a notebook, `%load_ext autoreload`, `%autoreload 2` and `from exercises import ch04_sampling as mine`
give you your own functions to try, reloaded whenever you save the file.
"""
