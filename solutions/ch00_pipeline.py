"""Chapter 00: the whole pipeline. No coding exercises, only the quiz.

`python judge.py quiz 00` prints the questions; `python judge.py 00` grades your answers.
"""

# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d"}.
QUIZ = {1: "c", 2: "b", 3: "a", 4: "d", 5: "c"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None}
