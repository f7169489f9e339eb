"""Reference answers for chapter 00 (the quiz only)."""

QUIZ = {1: "c", 2: "b", 3: "a", 4: "d", 5: "c"}
