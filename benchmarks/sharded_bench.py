"""Sharded sums on several GPUs (DTensor, NCCL): gpureduce against torch.sum
on the same DTensor, and against gpureduce on one GPU holding the whole
tensor.

    torchrun --nproc-per-node 2 benchmarks/sharded_bench.py --out-dir DIR

For each case (a full sum, row sums and column sums of a [rows, cols] float32
tensor, sharded over its rows or its columns) it times, on every rank at
once and in this order each round:

* ``gpureduce``: reduce_op.sum on the DTensor, then .full_tensor() (the
  combine: rank-order gather by default);
* ``gpureduce all_reduce``: the same under set_sharded_combine("all_reduce");
* ``torch``: torch.sum on the same DTensor, then .full_tensor();
* ``local``: reduce_op.sum on this rank's shard alone (no communication);
* ``one GPU``: reduce_op.sum of the whole tensor on this rank's GPU.

Each timing is a round of CUDA events around one call, after a barrier; the
inputs alternate between two random tensors (never zeros), and the figure
is the median over rounds of the slowest rank's time. Writes
sharded_<gpu>.json and .md under --out-dir.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics

import torch
import torch.distributed as dist
from torch.distributed.tensor import Shard, distribute_tensor, init_device_mesh

import reduce_op


def timed_ms(fn, rounds, inputs):
    """Per-round times (ms) of fn(inputs[r % 2]) on this rank, each after a barrier."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for x in inputs:  # warm-up: allocations, NCCL communicators, sharding caches
        fn(x)
    times = []
    for r in range(rounds):
        x = inputs[r % len(inputs)]
        dist.barrier()
        torch.cuda.synchronize()
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def slowest_rank_median(times):
    """The median over rounds of the slowest rank's time in each round."""
    t = torch.tensor(times, dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out-dir", default="benchmarks/results")
    parser.add_argument("--log2-numel", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cuda", (world,))
    cols = 1 << (args.log2_numel // 2)
    rows = (1 << args.log2_numel) // cols
    gen = torch.Generator(device="cuda").manual_seed(1234)  # the same tensors on every rank
    wholes = [torch.randn(rows, cols, device="cuda", generator=gen) for _ in range(2)]
    results = []
    cases = [("full sum", None), ("row sums (dim 1)", 1), ("column sums (dim 0)", 0)]
    for shard_dim in (0, 1):
        sharded = [distribute_tensor(w, mesh, [Shard(shard_dim)]) for w in wholes]
        locals_ = [s.to_local() for s in sharded]
        for name, dim in cases:
            def ours(x, dim=dim):
                return (reduce_op.sum(x) if dim is None else reduce_op.sum(x, dim)).full_tensor()

            def theirs(x, dim=dim):
                return (torch.sum(x) if dim is None else torch.sum(x, dim)).full_tensor()

            def local(x, dim=dim):
                return reduce_op.sum(x) if dim is None else reduce_op.sum(x, dim)

            row = {"case": name, "shard": f"Shard({shard_dim})", "shape": [rows, cols], "dtype": "float32"}
            row["gpureduce_ms"] = slowest_rank_median(timed_ms(ours, args.rounds, sharded))
            reduce_op.set_sharded_combine("all_reduce")
            row["gpureduce_all_reduce_ms"] = slowest_rank_median(timed_ms(ours, args.rounds, sharded))
            reduce_op.set_sharded_combine("rank_order")
            row["torch_ms"] = slowest_rank_median(timed_ms(theirs, args.rounds, sharded))
            row["local_ms"] = slowest_rank_median(timed_ms(local, args.rounds, locals_))
            row["one_gpu_ms"] = slowest_rank_median(timed_ms(local, args.rounds, wholes))
            # The check: the sharded result against torch's on the whole tensor.
            got, want = ours(sharded[0]), (wholes[0].sum() if dim is None else wholes[0].sum(dim))
            row["max_rel_err"] = ((got.double() - want.double()).abs().max() / want.double().abs().max()).item()
            nbytes = wholes[0].numel() * 4
            row["local_GBps"] = nbytes / world / row["local_ms"] / 1e6
            row["vs_one_gpu"] = row["one_gpu_ms"] / row["gpureduce_ms"]
            row["vs_torch"] = row["torch_ms"] / row["gpureduce_ms"]
            results.append(row)
            if rank == 0:
                print(f"{row['shard']:9s} {name:20s} gpureduce {row['gpureduce_ms']:.3f} ms "
                      f"(all_reduce {row['gpureduce_all_reduce_ms']:.3f}), torch {row['torch_ms']:.3f}, "
                      f"local {row['local_ms']:.3f} ({row['local_GBps']:.0f} GB/s), one GPU {row['one_gpu_ms']:.3f}: "
                      f"{row['vs_one_gpu']:.2f}x one GPU, {row['vs_torch']:.2f}x torch, rel err {row['max_rel_err']:.1e}",
                      flush=True)
    if rank == 0:
        gpu = torch.cuda.get_device_name().lower().replace(" ", "_")
        meta = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), "gpus": world,
                "torch": torch.__version__, "cuda": torch.version.cuda, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                "rounds": args.rounds}
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, f"sharded_{gpu}.json"), "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        with open(os.path.join(args.out_dir, f"sharded_{gpu}.md"), "w") as f:
            f.write(f"{world} x {meta['gpu']}, torch {meta['torch']}, NCCL {meta['nccl']}, {meta['date']}; "
                    f"median of {args.rounds} rounds of the slowest rank, ms\n\n")
            f.write("| shard | case | gpureduce | gpureduce (all_reduce) | torch.sum | local part | one GPU | x one GPU | x torch |\n")
            f.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
            for r in results:
                f.write(f"| {r['shard']} | {r['case']} | {r['gpureduce_ms']:.3f} | {r['gpureduce_all_reduce_ms']:.3f} | "
                        f"{r['torch_ms']:.3f} | {r['local_ms']:.3f} | {r['one_gpu_ms']:.3f} | {r['vs_one_gpu']:.2f} | "
                        f"{r['vs_torch']:.2f} |\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
