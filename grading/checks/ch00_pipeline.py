"""Checks for chapter 00, the whole pipeline: its quiz (exercises/ch00_pipeline.py)."""
from ..i18n import _
from ..model import Chapter, Question

CHAPTER = Chapter(
    number="00",
    module="ch00_pipeline",
    title=_("The whole pipeline"),
    quiz=[
        Question(1, _("A prompt of T tokens goes through the model. The logits have shape:"),
                 {"a": "[T, d]", "b": "[V, d]", "c": "[T, V]", "d": "[d, V]"},
                 "1e8596528890b4499a2d",
                 _("Reread section 6, 'LM head -> logits [T, V]', in notebook 00.")),
        Question(2, _("Which position's logits give the distribution of the token that comes after the prompt?"),
                 {"a": _("the first position"),
                  "b": _("the last position"),
                  "c": _("the average over all positions"),
                  "d": _("every position predicts the whole continuation")},
                 "b856deb5552c58ffeab5",
                 _("Reread section 7, 'Softmax -> a probability for every token -> the next token', in notebook 00.")),
        Question(3, _("In the course model, the LM head's weight matrix is:"),
                 {"a": _("the embedding matrix E itself"),
                  "b": _("a separate [V, d] matrix learned on its own"),
                  "c": _("a transposed copy of E made at load time"),
                  "d": _("a [d, d] matrix")},
                 "2701950082ecb9764d51",
                 _("Reread section 6 and the model card (tie_word_embeddings) in notebook 00.")),
        Question(4, _("Greedy decoding chooses each next token by:"),
                 {"a": _("drawing at random with the softmax probabilities"),
                  "b": _("taking the most frequent token"),
                  "c": _("taking the token whose embedding row is longest"),
                  "d": _("taking the argmax of the last logits")},
                 "6f3969443d6b621adb77",
                 _("Reread section 8, 'Greedy generation', in notebook 00.")),
        Question(5, _("The course model has V = 49,152 and d = 576. For a 6-token prompt, how many numbers does the "
                      "logits tensor hold?"),
                 {"a": "3,456", "b": "28,311,552", "c": "294,912", "d": "49,152"},
                 "7cbbac48e6f2d59ed5ff",
                 _("Reread section 6, 'LM head -> logits [T, V]', in notebook 00: one row of V logits per position.")),
    ],
)
