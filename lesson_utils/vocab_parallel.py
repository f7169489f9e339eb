"""Real vocab-parallel ranks for chapter 07: worker processes that talk through `torch.distributed` (gloo).

`run_ranks(worker, per_rank, common)` starts one process per rank with the *spawn* start method,
so the worker must be an importable function (the ones below are). Each process joins a gloo
process group through a rendezvous file in a private temporary folder (no network port to
collide with), runs `worker(rank, world_size, data, comm)` and sends back the dict it returns.
Every process is joined, or terminated and then killed, before `run_ranks` returns or raises:
a worker that fails, hangs or is interrupted never outlives the call.

The workers show the demonstrations of notebook 07. The embedding worker leaves the lookup to
PyTorch's own DTensor (the masked lookup is one of the chapter's exercises, so it is not written out
here); the head worker handles the simple layout the notebook uses (a vocabulary that splits evenly,
one hidden vector) and nothing more: the chapter's exercises generalise it.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import time
import traceback
from datetime import timedelta
from pathlib import Path
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

__all__ = ["CommLog", "RankFailed", "embedding_worker", "even_shards", "head_worker", "launched", "run_ranks",
           "ring_allreduce_bytes", "allgather_received_bytes", "echo_worker", "failing_worker", "sleeping_worker",
           "vocab_blocked_loss_and_grads", "measure_peak_memory", "MEMORY_METHODS"]


class RankFailed(RuntimeError):
    """A rank raised, crashed or timed out; the message holds its traceback or exit code."""


# ---------------------------------------------------------------- collectives that count their bytes


class CommLog:
    """Calls torch.distributed collectives and records what each rank hands to each one.

    `records` holds (operation, shape, dtype, payload bytes), the payload being the tensor this rank
    contributes: numel * element_size. What travels over the wire depends on the algorithm; see
    `ring_allreduce_bytes` and `allgather_received_bytes` for the textbook ring algorithms.
    """

    def __init__(self):
        self.records: list[tuple[str, tuple[int, ...], str, int]] = []

    def _note(self, op: str, t: torch.Tensor) -> None:
        self.records.append((op, tuple(t.shape), str(t.dtype).removeprefix("torch."), t.numel() * t.element_size()))

    def all_reduce(self, t: torch.Tensor, op: str = "sum") -> torch.Tensor:
        import torch.distributed as dist

        self._note(f"all_reduce({op})", t)
        dist.all_reduce(t, op={"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[op])
        return t

    def all_gather(self, t: torch.Tensor) -> list[torch.Tensor]:
        import torch.distributed as dist

        self._note("all_gather", t)
        out = [torch.empty_like(t) for _ in range(dist.get_world_size())]
        dist.all_gather(out, t.contiguous())
        return out


def ring_allreduce_bytes(payload: int, world_size: int) -> int:
    """Bytes each rank sends in a ring all-reduce of `payload` bytes: 2 (w - 1) / w * payload (rounded down)."""
    return 2 * (world_size - 1) * payload // world_size


def allgather_received_bytes(payload: int, world_size: int) -> int:
    """Bytes each rank receives in an all-gather where every rank contributes `payload` bytes."""
    return (world_size - 1) * payload


def even_shards(vocab_size: int, world_size: int) -> list[tuple[int, int]]:
    """[start, end) of each rank when the vocabulary splits evenly (the only layout the demonstrations use)."""
    if vocab_size % world_size:
        raise ValueError(f"the demonstrations need V divisible by the world size; {vocab_size} % {world_size} != 0")
    n = vocab_size // world_size
    return [(r * n, (r + 1) * n) for r in range(world_size)]


# ---------------------------------------------------------------- the demonstration workers


def embedding_worker(rank: int, world_size: int, data: dict, comm: CommLog) -> dict:
    """One rank of a vocab-parallel embedding lookup done by PyTorch itself, with a DTensor (torch.distributed.tensor).

    data: "shard" [V / w, d] (this rank's rows of E), "ids" [T] (the same on every rank). The shard becomes one
    piece of a table sharded by rows (`Shard(0)`), the ids a replicated tensor, and `F.embedding` on the two is
    PyTorch's own vocab-parallel lookup (what `RowwiseParallel` does to an `nn.Embedding`). Returns this rank's
    local result before the reduction ("local"), the reduced result ("full"), the output's placement and the
    collectives PyTorch issued (counted by `CommDebugMode`).
    """
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard
    from torch.distributed.tensor.debug import CommDebugMode

    mesh = init_device_mesh("cpu", (world_size,))
    table = DTensor.from_local(data["shard"], mesh, [Shard(0)], run_check=False)  # E, split by rows
    ids = DTensor.from_local(data["ids"], mesh, [Replicate()], run_check=False)  # every rank sees every id
    with CommDebugMode() as counter:
        out = F.embedding(ids, table)  # a partial result on each rank: nothing has been sent yet
        local = out.to_local().clone()
        full = out.full_tensor()  # the reduction: every rank now holds E[ids]
    collectives = {str(op).split(".")[-1]: n for op, n in counter.get_comm_counts().items() if n}
    return {"local": local, "full": full, "placement": type(out.placements[0]).__name__.lstrip("_"),
            "collectives": collectives}


def head_worker(rank: int, world_size: int, data: dict, comm: CommLog) -> dict:
    """One rank of a vocab-parallel LM head for ONE hidden vector: its slice of the logits, then four merges.

    data: "shard" [V / w, d] (this rank's rows of the head), "start", "h" [d], "k" (for top-k),
    "target" (a token id, for the cross-entropy). Each merge uses only a few numbers per rank.
    """
    W, start, h, k, target = data["shard"], data["start"], data["h"], data["k"], data["target"]
    vocab_size = W.shape[0] * world_size
    logits = W @ h  # [V / w]: this rank's slice of the logits
    out = {"local_logits": logits}

    # 1. gather everything: every rank receives every slice (what the merges below avoid)
    out["gathered"] = torch.cat(comm.all_gather(logits))

    # 2. greedy: the largest value anywhere, then the smallest token id that has it
    value, local_id = logits.max(dim=0)
    best = comm.all_reduce(value.clone(), "max")
    candidate = torch.where(value == best, start + local_id, torch.tensor(vocab_size))
    out["argmax"] = comm.all_reduce(candidate.clone(), "min")

    # 3. log-sum-exp: a global max first, then a global sum of exp(x - that max) (Megatron's order)
    global_max = comm.all_reduce(logits.max().clone(), "max")
    sum_exp = comm.all_reduce(torch.exp(logits - global_max).sum(), "sum")
    out["logsumexp"] = global_max + torch.log(sum_exp)

    # 4. top-k: each rank's k best with their global ids, gathered and merged
    top = logits.topk(k)
    values = torch.cat(comm.all_gather(top.values))
    ids = torch.cat(comm.all_gather(top.indices + start))
    merged = values.topk(k)
    out["topk_values"], out["topk_ids"] = merged.values, ids[merged.indices]

    # 5. cross-entropy of `target`: only the rank that owns it contributes its logit
    mine = start <= target < start + W.shape[0]
    target_logit = comm.all_reduce(logits[target - start].clone() if mine else torch.tensor(0.0), "sum")
    out["cross_entropy"] = out["logsumexp"] - target_logit
    return out


def echo_worker(rank: int, world_size: int, data: dict, comm: CommLog) -> dict:
    """Test helper: every rank contributes rank + 1; returns the all-reduced sum and its process id."""
    total = comm.all_reduce(torch.tensor(float(rank + 1)), "sum")
    return {"rank": rank, "sum": float(total), "pid": os.getpid(), "value": data.get("value")}


def failing_worker(rank: int, world_size: int, data: dict, comm: CommLog) -> dict:
    """Test helper: rank 1 raises, the others wait in a collective that will never complete."""
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")
    comm.all_reduce(torch.tensor(1.0), "sum")
    return {}


def sleeping_worker(rank: int, world_size: int, data: dict, comm: CommLog) -> dict:
    """Test helper: every rank sleeps for data['seconds']."""
    time.sleep(data["seconds"])
    return {"pid": os.getpid()}


# ---------------------------------------------------------------- starting and stopping ranks


def _rank_main(worker: Callable, rank: int, world_size: int, folder: str, timeout_s: float) -> None:
    """Entry point of one spawned rank: join the gloo group, run the worker, save its result."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    where = Path(folder)
    try:
        data = {**torch.load(where / "common.pt", weights_only=True),
                **torch.load(where / f"in{rank}.pt", weights_only=True)}
        dist.init_process_group("gloo", init_method=f"file://{where / 'rendezvous'}", rank=rank,
                                world_size=world_size, timeout=timedelta(seconds=timeout_s))
        try:
            comm = CommLog()
            result = worker(rank, world_size, data, comm)
            result["comm"] = comm.records
            torch.save(result, where / f"out{rank}.pt.tmp")
            os.replace(where / f"out{rank}.pt.tmp", where / f"out{rank}.pt")
        except BaseException:
            # written before the group is torn down, so the rank that failed first is on record first
            (where / f"error{rank}.txt").write_text(traceback.format_exc(), encoding="utf-8")
            raise
        finally:
            dist.destroy_process_group()
    except BaseException:
        if not (where / f"error{rank}.txt").exists():
            (where / f"error{rank}.txt").write_text(traceback.format_exc(), encoding="utf-8")
        raise SystemExit(1)


START_METHOD = os.environ.get("VOCAB_PARALLEL_START_METHOD", "")


def _context():
    """forkserver where the platform has it (a server with torch already imported forks each rank in
    milliseconds), else spawn; both need the worker to be importable. VOCAB_PARALLEL_START_METHOD overrides."""
    import multiprocessing

    method = START_METHOD or ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    ctx = torch.multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])
    return ctx


@contextlib.contextmanager
def launched(target: Callable, args_per_process: list[tuple]) -> Iterator[list]:
    """Start one spawned process per argument tuple; on leaving, however that happens, none is left running.

    Processes still alive at exit (an exception, a timeout, Ctrl-C in the notebook) are terminated,
    given two seconds, then killed; every one is joined.
    """
    ctx = _context()
    procs = [ctx.Process(target=target, args=args, daemon=True) for args in args_per_process]
    try:
        for p in procs:
            p.start()
        yield procs
    finally:
        for p in procs:
            if p.pid is not None and p.is_alive():
                p.terminate()
        for p in procs:
            if p.pid is not None:
                p.join(2)
                if p.is_alive():
                    p.kill()
                    p.join()


def run_ranks(worker: Callable, per_rank: list[dict], common: dict | None = None, timeout_s: float = 120.0) -> list[dict]:
    """Run `worker` on len(per_rank) real processes joined in a gloo group; return each rank's result dict.

    worker:   an importable function worker(rank, world_size, data, comm) -> dict of tensors/numbers,
              where data = {**common, **per_rank[rank]} and comm is a CommLog (its records come back as
              result["comm"]).
    Raises RankFailed with the failing rank's traceback if a rank fails, or if the ranks take longer than
    timeout_s; in every case all processes are stopped before this returns.
    """
    world_size = len(per_rank)
    with tempfile.TemporaryDirectory(prefix="vocab-parallel-") as folder:
        where = Path(folder)
        torch.save(common or {}, where / "common.pt")
        for rank, data in enumerate(per_rank):
            torch.save(data, where / f"in{rank}.pt")
        args = [(worker, rank, world_size, folder, timeout_s) for rank in range(world_size)]
        with launched(_rank_main, args) as procs:
            deadline = time.monotonic() + timeout_s
            failed = None
            while failed is None and any(p.is_alive() for p in procs):
                failed = next((r for r, p in enumerate(procs) if p.exitcode not in (None, 0)), None)
                if time.monotonic() > deadline:
                    raise RankFailed(f"the {world_size} ranks did not finish within {timeout_s:g} s")
                time.sleep(0.005)
            if failed is None:  # all exited: was any of them unsuccessful?
                failed = next((r for r, p in enumerate(procs) if p.exitcode != 0), None)
            if failed is not None:  # report the first rank that failed (the others fail after it, waiting for it)
                logs = sorted(where.glob("error*.txt"), key=lambda f: f.stat().st_mtime_ns)
                failed = int(logs[0].stem.removeprefix("error")) if logs else failed
                log = where / f"error{failed}.txt"
                detail = log.read_text(encoding="utf-8") if log.exists() else f"exit code {procs[failed].exitcode}"
                raise RankFailed(f"rank {failed} of {world_size} failed:\n{detail}")
            return [torch.load(where / f"out{r}.pt", weights_only=True) for r in range(world_size)]


# ---------------------------------------------------------------- the loss without all the logits


@torch.no_grad()
def vocab_blocked_loss_and_grads(h: torch.Tensor, W: torch.Tensor, targets: torch.Tensor, block: int):
    """Mean cross-entropy of h @ W.T and its gradients for h and W, computed `block` vocabulary rows at a time.

    No autograd: the gradient of the mean loss with respect to the logits is (softmax - one_hot) / N,
    so each block's share of grad_h and grad_W is computed from that block's logits, which are then
    dropped. At most an [N, block] tensor of logits exists at any time; the price is computing the
    logits three times (a global max, a sum of exp, the gradients), as the two-pass head_worker does
    across ranks. Returns (loss, grad_h, grad_W).
    """
    N, V = h.shape[0], W.shape[0]
    blocks = [(s, min(s + block, V)) for s in range(0, V, block)]
    row_max = torch.full((N,), float("-inf"), dtype=h.dtype)
    for s, e in blocks:  # pass 1: the largest logit of every position
        row_max = torch.maximum(row_max, (h @ W[s:e].T).amax(dim=-1))
    total = torch.zeros(N, dtype=h.dtype)
    for s, e in blocks:  # pass 2: the sum of exp(logit - max)
        total += torch.exp(h @ W[s:e].T - row_max[:, None]).sum(dim=-1)
    lse = row_max + torch.log(total)
    target_logit = (h * W[targets]).sum(dim=-1)
    loss = (lse - target_logit).mean()
    grad_h, grad_W = torch.zeros_like(h), torch.zeros_like(W)
    for s, e in blocks:  # pass 3: softmax / N of this block, times the other factor of the product
        p = torch.exp(h @ W[s:e].T - lse[:, None]) / N
        grad_h += p @ W[s:e]
        grad_W[s:e] = p.T @ h
    grad_h -= W[targets] / N  # the one-hot part: -1/N at each position's target
    grad_W.index_add_(0, targets, -h / N)
    return loss, grad_h, grad_W


MEMORY_METHODS = ("F.cross_entropy, autograd", "vocabulary blocks, manual gradient")


def _peak_rss_bytes() -> int:
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS reports bytes, Linux kibibytes


def _return_freed_memory() -> None:
    """With glibc, serve every allocation of 1 MiB or more by mmap, so a freed tensor leaves the resident set.

    Otherwise glibc raises its mmap threshold after the first large free and keeps later blocks on its
    heap, where freed memory still counts as resident: the peak would grow with every block.
    """
    import ctypes
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
        except (OSError, AttributeError):
            pass


def _memory_probe(method: str, n: int, vocab: int, dim: int, block: int, seed: int, out_path: str) -> None:
    """Entry point of a fresh process: build the inputs, note the peak RSS, run one method, note it again."""
    import json

    torch.set_num_threads(1)
    _return_freed_memory()
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, dim, generator=g)
    W = 0.1 * torch.randn(vocab, dim, generator=g)
    targets = torch.randint(0, vocab, (n,), generator=g)
    before = _peak_rss_bytes()
    if method == MEMORY_METHODS[0]:
        h.requires_grad_(True)
        W.requires_grad_(True)
        loss = F.cross_entropy(h @ W.T, targets)
        loss.backward()
        grads = (h.grad, W.grad)
    elif method == MEMORY_METHODS[1]:
        loss, *grads = vocab_blocked_loss_and_grads(h, W, targets, block)
    else:
        raise ValueError(f"unknown method {method!r}; one of {MEMORY_METHODS}")
    after = _peak_rss_bytes()
    Path(out_path).write_text(json.dumps({"before": before, "after": after, "loss": float(loss.detach()),
                                          "grad_norm": float(sum(g.norm() ** 2 for g in grads) ** 0.5)}))


def measure_peak_memory(method: str, n: int, vocab: int, dim: int, block: int = 4096, seed: int = 0,
                        timeout_s: float = 120.0) -> dict:
    """Run one loss-and-gradient method in a fresh process; return its peak memory growth in bytes.

    The process builds h [n, dim], W [vocab, dim] and targets, reads its peak resident set size
    (getrusage's ru_maxrss, which sees every allocation, torch's included), runs the method, and reads
    it again: "extra" is how far the peak rose while the method ran. POSIX only (Linux, macOS).
    Returns {"extra": bytes, "loss": float, "grad_norm": float}.
    """
    import json

    with tempfile.TemporaryDirectory(prefix="loss-memory-") as folder:
        out = Path(folder) / "result.json"
        with launched(_memory_probe, [(method, n, vocab, dim, block, seed, str(out))]) as (proc,):
            proc.join(timeout_s)
            if proc.is_alive():
                raise RankFailed(f"the memory probe did not finish within {timeout_s:g} s")
        if proc.exitcode != 0 or not out.exists():
            raise RankFailed(f"the memory probe for {method!r} failed with exit code {proc.exitcode}")
        result = json.loads(out.read_text())
    return {"extra": result["after"] - result["before"], "loss": result["loss"], "grad_norm": result["grad_norm"]}
