"""Reference answers for chapter 00 (the quiz only)."""

QUIZ = {1: "c", 2: "b", 3: "b", 4: "b", 5: "c"}
