"""Tests for lesson_utils.vocab_parallel (real gloo ranks for chapter 07) and lesson_utils.scale_plots."""
import os
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from lesson_utils import vocab_parallel as vp  # noqa: E402
from lesson_utils.scale_plots import plot_bytes_per_token, plot_sampling_costs  # noqa: E402


def gone(pid: int) -> bool:
    """True when no process with this id exists any more (it was joined, not left as a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_even_shards_and_byte_formulas():
    assert vp.even_shards(12, 3) == [(0, 4), (4, 8), (8, 12)]
    with pytest.raises(ValueError):
        vp.even_shards(10, 3)
    assert vp.ring_allreduce_bytes(13824, 4) == 20736 and vp.ring_allreduce_bytes(100, 1) == 0
    assert vp.allgather_received_bytes(96, 8) == 672


@pytest.mark.parametrize("world", [1, 2, 3])
def test_real_gloo_ranks_start_reduce_and_are_joined(world):
    results = vp.run_ranks(vp.echo_worker, [{"value": r} for r in range(world)], {"value": -1})
    assert [r["rank"] for r in results] == list(range(world))
    assert all(r["sum"] == world * (world + 1) / 2 for r in results)  # a real all-reduce across processes
    assert [r["value"] for r in results] == list(range(world))  # per-rank data overrides the common data
    pids = {r["pid"] for r in results}
    assert len(pids) == world and os.getpid() not in pids
    assert all(gone(pid) for pid in pids)
    assert results[0]["comm"] == [("all_reduce(sum)", (), "float32", 4)]


def test_spawn_start_method_works_too(monkeypatch):
    monkeypatch.setattr(vp, "START_METHOD", "spawn")
    results = vp.run_ranks(vp.echo_worker, [{}, {}])
    assert [r["sum"] for r in results] == [3.0, 3.0] and all(gone(r["pid"]) for r in results)


def test_a_failing_rank_is_reported_and_every_rank_stopped():
    start = time.monotonic()
    with pytest.raises(vp.RankFailed, match="rank 1 fails on purpose"):
        vp.run_ranks(vp.failing_worker, [{}, {}, {}], timeout_s=60)
    assert time.monotonic() - start < 45  # the waiting ranks were not left to time out


def test_ranks_that_hang_are_stopped_at_the_timeout():
    start = time.monotonic()
    with pytest.raises(vp.RankFailed, match="did not finish"):
        vp.run_ranks(vp.sleeping_worker, [{"seconds": 60}, {"seconds": 60}], timeout_s=3)
    assert time.monotonic() - start < 30


def test_launched_terminates_processes_when_the_body_fails():
    with pytest.raises(KeyboardInterrupt):
        with vp.launched(time.sleep, [(60,), (60,)]) as procs:
            pids = [p.pid for p in procs]
            assert all(p.is_alive() for p in procs)
            raise KeyboardInterrupt  # what stopping a notebook cell raises
    assert all(not p.is_alive() and p.exitcode is not None for p in procs)
    assert all(gone(pid) for pid in pids)


@pytest.mark.parametrize("world", [2, 4])
def test_embedding_worker_is_pytorchs_own_vocab_parallel_lookup(world):
    E = torch.randn(24, 5, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([0, 23, 6, 11, 12, 5, 18, 0])
    shards = vp.even_shards(24, world)
    results = vp.run_ranks(vp.embedding_worker, [{"shard": E[s:e].clone()} for s, e in shards], {"ids": ids})
    for (s, e), r in zip(shards, results):
        assert torch.equal(r["full"], E[ids])  # bit for bit on every rank
        owned = (ids >= s) & (ids < e)
        assert torch.equal(r["local"][owned], E[ids][owned])  # the rank's own rows, before the reduction
        assert not torch.equal(r["local"], torch.where(owned[:, None], E[ids], 0.0))  # borrowed rows not zeroed yet
        assert r["placement"] == "MaskPartial" and r["collectives"] == {"all_reduce": 1}
        assert r["comm"] == []  # DTensor talks to the process group itself, not through CommLog


def test_head_worker_merges_equal_the_unsharded_references():
    g = torch.Generator().manual_seed(1)
    W, h = torch.randn(40, 6, generator=g), torch.randn(6, generator=g)
    W[20] *= 5  # a long row: along its own direction no other row scores higher
    W[[7, 33]] = W[20].clone()  # three tokens, on ranks 0, 2 and 3, tie for the largest logit
    h = W[20] / W[20].norm() * 3
    logits = W @ h
    assert int(logits.argmax()) == 7
    shards = vp.even_shards(40, 4)
    results = vp.run_ranks(vp.head_worker, [{"shard": W[s:e].clone(), "start": s} for s, e in shards],
                           {"h": h, "k": 3, "target": 33})
    for r in results:
        assert torch.allclose(r["gathered"], logits, atol=1e-6)
        assert int(r["argmax"]) == 7  # ties go to the smallest id, as torch.argmax
        assert torch.allclose(r["logsumexp"], torch.logsumexp(logits, 0), atol=1e-5)
        assert set(r["topk_ids"].tolist()) == {7, 20, 33}
        assert torch.allclose(r["cross_entropy"], F.cross_entropy(logits[None], torch.tensor([33])), atol=1e-5)
        assert [c[0] for c in r["comm"]] == ["all_gather", "all_reduce(max)", "all_reduce(min)", "all_reduce(max)",
                                             "all_reduce(sum)", "all_gather", "all_gather", "all_reduce(sum)"]


@pytest.mark.parametrize("dtype, block", [(torch.float64, 7), (torch.float32, 64), (torch.float64, 1000)])
def test_vocab_blocked_loss_and_grads_equal_autograd(dtype, block):
    g = torch.Generator().manual_seed(2)
    h = torch.randn(9, 5, generator=g, dtype=dtype)
    W = torch.randn(50, 5, generator=g, dtype=dtype)
    targets = torch.tensor([0, 49, 3, 3, 17, 8, 49, 22, 1])  # repeated targets: the one-hot part adds up
    loss, grad_h, grad_W = vp.vocab_blocked_loss_and_grads(h, W, targets, block)
    h_ref, W_ref = h.clone().requires_grad_(True), W.clone().requires_grad_(True)
    ref = F.cross_entropy(h_ref @ W_ref.T, targets)
    ref.backward()
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    assert not loss.requires_grad and abs(float(loss) - float(ref.detach())) < tol
    assert torch.allclose(grad_h, h_ref.grad, atol=tol) and torch.allclose(grad_W, W_ref.grad, atol=tol)


def test_peak_memory_probe_runs_each_method_in_its_own_process():
    one_shot = vp.measure_peak_memory(vp.MEMORY_METHODS[0], 64, 4096, 8, block=512)
    blocked = vp.measure_peak_memory(vp.MEMORY_METHODS[1], 64, 4096, 8, block=512)
    assert abs(one_shot["loss"] - blocked["loss"]) < 1e-4 and abs(one_shot["grad_norm"] - blocked["grad_norm"]) < 1e-5
    assert one_shot["extra"] >= 0 and blocked["extra"] >= 0
    with pytest.raises(vp.RankFailed):
        vp.measure_peak_memory("no such method", 4, 16, 2)


def test_plot_sampling_costs_one_panel_per_batch_and_log_scale():
    ops, vocab, batches = ["a", "b"], [10, 20, 30], [1, 32]
    times = {(o, v, b): 0.001 * (i + 1) for i, o in enumerate(ops) for v in vocab for b in batches}
    axes = plot_sampling_costs(times, ops, vocab, batches)
    assert len(axes) == 2 and all(ax.get_yscale() == "log" for ax in axes)
    assert len(axes[0].patches) == len(ops) * len(vocab)
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["V = 10", "V = 20", "V = 30"]
    assert axes[1].patches[0].get_height() == pytest.approx(1.0)  # plotted in milliseconds
    plt.close(axes[0].figure)


def test_plot_bytes_per_token_groups_and_methods():
    ax = plot_bytes_per_token([("gather", [100, 1000]), ("merge", [8, 12])], ["small", "large"], title="t")
    assert len(ax.patches) == 4 and ax.get_xscale() == "log" and ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["small", "large"]
    plt.close(ax.figure)
