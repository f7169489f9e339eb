"""How case inputs travel from the judge to the worker: both sides of one pickling contract.

The judge pickles (FixturePickler, pickle_inputs): the course model, its tokenizer, its embedding matrix E and
views of them travel by name, transformers models as a recipe. The worker unpickles (InputsUnpickler): names
become the worker's own copy of the fixture, recipes are rebuilt. Holds no check and no reference answer.
"""
from __future__ import annotations

import copy
import io
import pickle
from typing import Any

import torch

from . import inputs as course_inputs


def warm_transformers() -> None:
    """Once inputs have brought transformers in (the course model, a model built by the judge), its model classes
    too, so every learner process starts with them loaded. Inputs of plain tensors never pay for it."""
    import sys

    if "transformers" in sys.modules:
        from transformers import GPT2LMHeadModel, LlamaForCausalLM, Qwen3ForCausalLM  # noqa: F401


class FixturePickler(pickle.Pickler):
    """Pickles case inputs, sending the course model, its tokenizer, E and views of them by name."""

    def __init__(self, file, fixtures_by_id: dict[int, tuple], storages: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._by_id, self._storages = fixtures_by_id, storages
        self.used: set[str] = set()  # "course_model" (the model, its tokenizer or a parameter), "course_embedding"

    def persistent_id(self, obj: Any):
        pid = self._fixture(obj)
        if pid is not None and pid[0] != "hf_model":
            self.used.add("course_embedding" if "course_embedding" in pid[:2] else "course_model")
        return pid

    def _fixture(self, obj: Any):
        hit = self._by_id.get(id(obj))
        if hit is not None:
            return hit
        if _is_hf_model(obj):
            return hf_model_recipe(obj)
        if type(obj) in (torch.Tensor, torch.nn.Parameter) and self._storages:
            key = self._storages.get(obj.untyped_storage().data_ptr())
            if key is not None:
                return ("view", key, tuple(obj.shape), tuple(obj.stride()), obj.storage_offset(), obj.requires_grad)
        return None


def _is_hf_model(obj: Any) -> bool:
    return (isinstance(obj, torch.nn.Module) and type(obj).__module__.startswith("transformers.")
            and hasattr(obj, "config") and hasattr(obj.config, "to_dict"))


def hf_model_recipe(model: torch.nn.Module) -> tuple:
    """A transformers model as (class, config, weights, flags): rebuilt in the worker, not unpickled,
    because a model's forward hooks (hidden-state recording) do not survive pickling."""
    params = dict(model.named_parameters(remove_duplicate=False))
    meta = any(p.is_meta for p in params.values())
    state = {} if meta else {k: v.detach().clone() for k, v in model.state_dict().items()}
    plain = (bool, int, float, str, type(None))
    attrs = {name: {k: v for k, v in vars(m).items() if type(v) in plain and not k.startswith("_")}
             for name, m in model.named_modules()}  # e.g. a norm's eps changed on the instance
    return ("hf_model", type(model).__module__, type(model).__qualname__, model.config.to_dict(), state,
            {k: p.requires_grad for k, p in params.items()}, model.training, meta,
            str(next(iter(params.values())).dtype) if params else "torch.float32", attrs)


def pickle_inputs(inputs: dict[str, list]) -> bytes:
    """Pickled {exercise: [inputs per case]} for a worker; course fixtures travel by name."""
    return pickle_noting_fixtures(inputs)[0]


def pickle_noting_fixtures(inputs: dict[str, list]) -> tuple[bytes, set[str]]:
    """pickle_inputs, and which course fixtures went by name ("course_model", "course_embedding")."""
    by_id: dict[int, tuple] = {}
    storages: dict[int, str] = {}
    if course_inputs.course_model_loaded():
        model, tok = course_inputs.course_model()
        by_id[id(model)] = ("course_model",)
        by_id[id(tok)] = ("course_tokenizer",)
        for name, p in model.named_parameters():
            by_id[id(p)] = ("base", f"param:{name}")
            storages.setdefault(p.untyped_storage().data_ptr(), f"param:{name}")
    if course_inputs.course_embedding_loaded():
        e = course_inputs.course_embedding()
        by_id[id(e)] = ("base", "course_embedding")
        storages[e.untyped_storage().data_ptr()] = "course_embedding"
    buf = io.BytesIO()
    pickler = FixturePickler(buf, by_id, storages)
    pickler.dump(inputs)
    return buf.getvalue(), pickler.used


def resolve_fixture(pid: tuple) -> Any:
    """The worker's own copy of a course fixture that the judge pickled by name (see FixturePickler)."""
    kind = pid[0]
    if kind == "hf_model":
        return _rebuild_hf_model(*pid[1:])
    if kind == "course_model":
        return course_inputs.course_model()[0]
    if kind == "course_tokenizer":
        return course_inputs.course_model()[1]
    base_key = pid[1]
    if base_key == "course_embedding":
        base = course_inputs.course_embedding()
    else:
        base = dict(course_inputs.course_model()[0].named_parameters())[base_key.removeprefix("param:")]
    if kind == "base":
        return base
    _, _, shape, stride, offset, requires_grad = pid
    view = base.detach().as_strided(shape, stride, offset)
    return view.requires_grad_(requires_grad) if requires_grad else view


def _rebuild_hf_model(module: str, qualname: str, config: dict, state: dict, requires_grad: dict,
                      training: bool, meta: bool, dtype: str, attrs: dict | None = None):
    """The counterpart of hf_model_recipe: the same class, config, weights and flags."""
    import importlib

    import torch

    cls = getattr(importlib.import_module(module), qualname)
    cfg = cls.config_class.from_dict(config)
    with torch.random.fork_rng(), torch.device("meta" if meta else "cpu"):
        model = cls(cfg)
    model = model.to(getattr(torch, dtype.removeprefix("torch.")))
    if state:
        model.load_state_dict(state, strict=False)
    for name, p in model.named_parameters(remove_duplicate=False):
        p.requires_grad_(requires_grad.get(name, p.requires_grad))
    model.train(training)
    modules = dict(model.named_modules())
    for name, values in (attrs or {}).items():
        if name in modules:
            for key, value in values.items():
                if key != "training":
                    setattr(modules[name], key, value)
    return model


class InputsUnpickler(pickle.Unpickler):
    shared = False  # set once a fixture that per-case copies share (not an hf_model rebuilt here) is loaded

    def persistent_load(self, pid):
        self.shared |= pid[0] != "hf_model"
        return resolve_fixture(tuple(pid))


def shared_objects() -> dict[int, Any]:
    """Objects that per-case deep copies share instead of copying (the course model and E, once loaded)."""
    keep: dict[int, Any] = {}
    if course_inputs.course_model_loaded():
        for obj in course_inputs.course_model():
            keep[id(obj)] = obj
    if course_inputs.course_embedding_loaded():
        e = course_inputs.course_embedding()
        keep[id(e)] = e
    return keep


class CopiedPerExercise(dict):
    """Spawn backend's `keep`: each exercise gets its own copy of the course model and E, made the first time one
    of its cases' inputs reaches them and shared by that exercise's cases (the tokenizer is shared as in `keep`).
    So one spare grades a whole chapter: an exercise that changes the model changes only its own copy, which the
    fork backend gets by running such an exercise last in its process instead (grading/worker/batches.py)."""

    def __init__(self, originals: dict[int, Any]):
        super().__init__(originals)

    def for_exercise(self) -> "_CopyingMemo":
        return _CopyingMemo(dict(self), {})


class _CopyingMemo(dict):
    """A deepcopy memo that answers a model or E of `originals` with the exercise's own copy (made on first use)."""

    def __init__(self, originals: dict[int, Any], copies: dict[int, Any]):
        super().__init__()
        self.originals, self.copies = originals, copies

    def get(self, key, default=None):
        if key in self.originals and not dict.__contains__(self, key):
            original = self.originals[key]
            if not isinstance(original, (torch.nn.Module, torch.Tensor)):
                return original  # the tokenizer: shared, as the fork backend shares it
            if key not in self.copies:
                self.copies[key] = copy.deepcopy(original)
            return self.copies[key]
        return dict.get(self, key, default)

    def copy(self) -> "_CopyingMemo":
        return _CopyingMemo(self.originals, self.copies)
