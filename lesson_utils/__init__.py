"""Helpers the course notebooks import: model loading, display and plotting."""
from .course_model import (
    MODEL_CARD,
    CourseModelError,
    cache_root,
    course_model_dir,
    embeddings_are_tied,
    find_course_gguf,
    load_course_model,
)
from .hub_models import ModelNotAvailable, load_model, model_available, try_load_model
from .tiny_models import tiny_config, tiny_model
from . import kernel_hooks

kernel_hooks.install()  # in a notebook only: figures record their data; a translated edition translates output

__all__ = [
    "MODEL_CARD", "CourseModelError", "ModelNotAvailable", "cache_root", "course_model_dir",
    "embeddings_are_tied", "find_course_gguf", "load_course_model", "load_model",
    "model_available", "tiny_config", "tiny_model", "try_load_model",
]
