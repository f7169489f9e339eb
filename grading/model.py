"""What the judge works with, as plain data (no torch): a chapter's spec (chapters, exercises, cases, quiz
questions) and what grading produces (case and exercise results, their statuses).

A check module `grading/checks/chNN_topic` defines `CHAPTER = Chapter(...)`. It is loaded only in the judge's own
process: the judge builds each case's inputs there and sends them (pickled) to the learner's sandboxed process,
which calls the learner's function through the case's named call (`grading/worker/calls/`) and sends back only
the outputs. No check module, and so no reference answer, is ever loaded next to learner code.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from .i18n import N_, _, verbatim

# How a named mistake reads after the message it explains (a CaseResult's full_message, a CheckFailed's str).
MISTAKE_MSG = N_("Likely mistake: {mistake}")


def with_mistake(message: str, mistake: str) -> str:
    """`message` followed by the line that names `mistake` (nothing added when `mistake` is '')."""
    return message + ("\n  " + _(MISTAKE_MSG, mistake=mistake) if mistake else "")


class CheckFailed(Exception):
    """A learner result that does not match the reference. `message` teaches what is wrong; `mistake` is the one
    known mistake that explains it, when the evidence singles one out (grading/checks/compare.py names it), else ''.
    str() gives both, as the learner reads them."""

    def __init__(self, message: str = "", mistake: str = ""):
        super().__init__(message, mistake)
        self.message, self.mistake = message, mistake

    def __str__(self) -> str:
        return with_mistake(self.message, self.mistake)


PASSED, WRONG, ERROR, TIMEOUT, NOT_ATTEMPTED = "passed", "wrong answer", "error", "timeout", "not attempted"
STATUS_TEXT = {PASSED: N_("passed"), WRONG: N_("wrong answer"), ERROR: N_("error"), TIMEOUT: N_("timeout"),
               NOT_ATTEMPTED: N_("not attempted")}  # statuses are stable machine values; shown with status_text


def status_text(status: str) -> str:
    """A status as the learner reads it (marked for translation; machine values stay English in teacher files)."""
    return _(STATUS_TEXT[status]) if status in STATUS_TEXT else status


@dataclass
class CaseResult:
    """One case's verdict, as every report reads it (filled once by grading/engine/checker.py)."""

    name: str
    passed: bool
    seconds: float = 0.0
    message: str = ""  # what failed, without the named mistake
    mistake: str = ""  # the named mistake (CheckFailed.mistake), or ''
    error_type: str = ""  # the class name of what the learner's code raised ("ValueError"), or ''

    @property
    def full_message(self) -> str:
        """The message with its named mistake, as the learner reads it in a case's details."""
        return with_mistake(self.message, self.mistake)


@dataclass
class ExerciseResult:
    """One exercise's verdict with everything a report shows (filled once by grading/engine/checker.py)."""

    chapter: str
    name: str
    status: str
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""  # the message of the whole exercise when nothing was checked case by case, else ''
    isolation: str = ""  # the sandbox the learner's code ran in (grading/engine/sandbox.py: "bubblewrap" or "audit hooks")
    is_quiz: bool = False  # the exercise's Exercise.is_quiz (a quiz's cases are its questions)
    points: float = 0.0  # what this result earned (all or nothing, or the passed cases' share: score())
    max_points: float = 0.0  # what the exercise is worth (Exercise.points)
    summary: str = ""  # the exercise's one-line summary
    hint: str = ""  # the exercise's hint
    import_error: str = ""  # the class name of what importing the learner's file raised ("SyntaxError"), or ''
    fails_through: list[tuple[str, str]] = field(default_factory=list)  # (name, status) of the learner's own
    # failing exercise functions this one calls (grading/dependencies.py reads them from the learner's file)

    @property
    def passed(self) -> bool:
        return self.status == PASSED


def score(ex: "Exercise", cases_passed: list[bool], passed: bool) -> float:
    """The points an exercise earns: all or nothing, or shared by the cases' weights (in `ex.cases` order) when it
    gives partial credit."""
    if passed:
        return round(float(ex.points), 2)
    total = sum(c.points for c in ex.cases)
    if not ex.partial_credit or not total:
        return 0.0
    got = sum(c.points for c, ok in zip(ex.cases, cases_passed) if ok)
    return round(float(ex.points) * got / total, 2)


QUIZ_SALT = "llm-course-quiz-v1"


@dataclass
class Case:
    """One input for one exercise.

    make_inputs: builds the arguments, in the judge's process only; they must pickle (tensors,
        numbers, modules; the course model and its E travel by name, see grading/worker/transport.py).
    check: judge side; gets (learner_output, inputs) and raises CheckFailed.
    call: the NAME of a protocol in grading.worker.calls.PROTOCOLS, which runs in the learner's
        process: gets (learner_function, inputs) and returns what is sent back (tensors,
        numbers, strings, containers of them). Default "call": fn(*inputs).
    """

    name: str
    make_inputs: Callable[[], tuple]
    check: Callable[[Any, tuple], None]
    call: str = "call"
    points: float = 1.0  # this case's weight when its exercise gives partial credit

    def __post_init__(self):
        if self.call is None:
            self.call = "call"
        if not isinstance(self.call, str):  # that the name is a protocol: grading/catalog.py, when it loads CHAPTER
            raise TypeError(f"Case {self.name!r}: call= must name a protocol in grading/worker/calls/, got "
                            f"{self.call!r}. Learner-side code lives there, never in a chapter's checks.")


@dataclass
class Exercise:
    """A function the learner writes in `exercises/<chapter module>.py`."""

    name: str
    summary: str
    cases: list[Case]
    hint: str
    timeout_s: float = 30.0
    is_quiz: bool = False
    uses_course_model: bool = False  # the judge prepares the model cache before grading it
    points: float = 3.0  # what the exercise is worth (grading/reports/points.py scores it)
    partial_credit: bool = False  # False: all or nothing; True: points shared by the cases' weights
    # (facts of the learner's function as grading/techniques.py reads them, a case's call) -> why that case
    # cannot pass, or '': a technique the learner's process only reports must also be in the learner's source
    source_check: Callable[[frozenset, str], str] | None = None


@dataclass
class Chapter:
    number: str  # "01"
    module: str  # file name without .py, the same in exercises/, solutions/, mutants/ and grading/checks/
    title: str
    exercises: list[Exercise] = field(default_factory=list)
    quiz: list["Question"] = field(default_factory=list)

    def __post_init__(self):
        if self.quiz:
            self.exercises.append(quiz_exercise(self.number, self.quiz))


@dataclass
class Question:
    """A multiple-choice question; the answer is stored only as a salted hash."""

    id: int
    text: str
    choices: dict[str, str]
    answer_hash: str
    review: str  # where to look again when the answer is wrong
    points: float = 1.0


def quiz_hash(chapter: str, question_id: int, answer: str) -> str:
    """Salted hash of one answer (lower-cased, stripped)."""
    text = f"{QUIZ_SALT}:{chapter}:{question_id}:{answer.strip().lower()}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def quiz_exercise(chapter: str, questions: list[Question]) -> Exercise:
    """An exercise named `quizNN` that grades the learner's `QUIZ` dict, one case per question."""
    def case_for(q: Question) -> Case:
        def check(answers, _inputs):
            if not isinstance(answers, dict):
                raise CheckFailed(_("QUIZ must be a dict like {example}.", example="{1: 'b', 2: 'a'}"))
            given = answers.get(q.id, answers.get(str(q.id)))
            if given is None:
                raise NotImplementedError
            if not isinstance(given, str) or given.strip().lower() not in q.choices:
                raise CheckFailed(_("Question {id}: answer with one of {choices}, got {given}.", id=q.id,
                                    choices=str(sorted(q.choices)), given=verbatim(repr(given))))
            if not q.answer_hash:  # a hand-out built with --hide-quiz-answers: only the teacher's copy can tell
                raise CheckFailed(_("Question {id}: answered. Your teacher grades the quiz: this copy of the course "
                                    "holds no quiz answers.", id=q.id))
            if quiz_hash(chapter, q.id, given) != q.answer_hash:
                raise CheckFailed(_("Question {id}: {given} is not right. {review}", id=q.id,
                                    given=verbatim(repr(given)), review=q.review))

        return Case(_("question {id}", id=q.id), lambda: (), check, call="quiz", points=q.points)

    hint = _("Answer in the QUIZ dict at the bottom of the exercise file, e.g. QUIZ = {example}.",
             example="{1: 'b', 2: 'd'}")
    return Exercise(f"quiz{chapter}", _("Chapter {chapter} quiz", chapter=chapter), [case_for(q) for q in questions],
                    hint, is_quiz=True,
                    points=sum(q.points for q in questions), partial_credit=True)  # a quiz scores per question
