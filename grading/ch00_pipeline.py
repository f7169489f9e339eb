"""Checks for chapter 00, the whole pipeline: its quiz (exercises/ch00_pipeline.py)."""
from .spec import Chapter, Question

CHAPTER = Chapter(
    number="00",
    module="ch00_pipeline",
    title="The whole pipeline",
    quiz=[
        Question(1, "A prompt of T tokens goes through the model. The logits have shape:",
                 {"a": "[T, d]", "b": "[V, d]", "c": "[T, V]", "d": "[d, V]"},
                 "1e8596528890b4499a2d", "Reread section 6, 'LM head -> logits [T, V]', in notebook 00."),
        Question(2, "Which position's logits give the distribution of the token that comes after the prompt?",
                 {"a": "the first position", "b": "the last position", "c": "the average over all positions",
                  "d": "every position predicts the whole continuation"},
                 "b856deb5552c58ffeab5", "Reread section 7, 'Softmax -> ... -> the next token', in notebook 00."),
        Question(3, "In the course model, the LM head's weight matrix is:",
                 {"a": "a separate [V, d] matrix learned on its own", "b": "the embedding matrix E itself",
                  "c": "a transposed copy of E made at load time", "d": "a [d, d] matrix"},
                 "6ece68da714647e592d0", "Reread section 6 and the model card (tie_word_embeddings) in notebook 00."),
        Question(4, "Greedy decoding chooses each next token by:",
                 {"a": "drawing at random with the softmax probabilities", "b": "taking the argmax of the last logits",
                  "c": "taking the token whose embedding row is longest", "d": "taking the most frequent token"},
                 "d1b074ad7cd2b5719315", "Reread section 8, 'Greedy generation', in notebook 00."),
    ],
)
