#!/usr/bin/env python3
"""placement-probe.py -- does where a small memory-bound call's tensors sit change its time?

Times y = clamp_min(x, 0) (relu into a given output) on a 128 x 8192 fp32 tensor (4 MiB in,
4 MiB out; about 6 us on an H200) the way kbv's timer does -- 2x-L2 flush, a spin cushion
while the call is queued, CUDA events on the stream -- over several placements, rounds
interleaved: every combination of --inputs separate x allocations, --outputs separate y
allocations and --flushes separate flush buffers, each allocation 1 GiB away from the last,
and with --offsets the x views at chosen offsets past a 2 MiB boundary. With --prime each sample is preceded by one untimed call (kbv's
--prime). Prints one line per placement: median, mean and quartiles in microseconds.
Used for BENCHMARKS.md ("placement"); needs a GPU.

  python3 placement-probe.py [--rounds N] [--prime] [--touch] [--inputs I] [--outputs O] [--flushes F] [--offsets MiB,...]
"""
import argparse
import statistics

import torch

MiB = 1 << 20


def aligned_view(buf, offset_bytes, numel):
    """A view of buf starting offset_bytes past buf's first 2 MiB boundary."""
    skip = (-buf.data_ptr()) % (2 * MiB) + offset_bytes
    return buf[skip // 4:skip // 4 + numel]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--prime", action="store_true", help="one untimed call before each sample")
    ap.add_argument("--inputs", type=int, default=1, help="separate x allocations")
    ap.add_argument("--outputs", type=int, default=1, help="separate y allocations")
    ap.add_argument("--flushes", type=int, default=1, help="separate flush buffers")
    ap.add_argument("--offsets", default="0", help="x offsets, MiB past a 2 MiB boundary")
    ap.add_argument("--touch", action="store_true",
                    help="after the flush, read one element per 2 MiB page of x and y (warms their address translations, not L2)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("placement-probe: needs a GPU")
    dev = torch.device("cuda")
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    numel = 128 * 8192
    keep = []

    def alloc(n, fill=None):
        keep.append(torch.empty(256 * MiB, dtype=torch.int32, device=dev))  # 1 GiB apart
        t = torch.empty(n, device=dev)
        if fill is not None:
            t.normal_()
        return t

    flushes = [alloc(2 * l2 // 4 + 1) for _ in range(args.flushes)]
    xs = [alloc(numel + 4 * MiB, True) for _ in range(args.inputs)]
    ys = [alloc(numel + 4 * MiB) for _ in range(args.outputs)]
    offs = [float(o) for o in args.offsets.split(",")]
    places = [(i, j, f, o) for i in range(args.inputs) for j in range(args.outputs)
              for f in range(args.flushes) for o in offs]
    views = [(aligned_view(xs[i], int(o * MiB), numel), aligned_view(ys[j], 0, numel), flushes[f])
             for i, j, f, o in places]
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = [[] for _ in places]
    for r in range(args.rounds + 5):
        for i, (x, y, flush) in enumerate(views):
            if args.prime:
                torch.clamp_min(x, 0, out=y)
            flush.fill_(r)
            if args.touch:
                x[::(2 * MiB) // 4].sum(), y[::(2 * MiB) // 4].sum()
            torch.cuda._sleep(200000)
            e0.record(stream)
            torch.clamp_min(x, 0, out=y)
            e1.record(stream)
            torch.cuda.synchronize()
            if r >= 5:
                times[i].append(e0.elapsed_time(e1) * 1000.0)
    print(f"# prime={int(args.prime)} touch={int(args.touch)} rounds={args.rounds}")
    print("# input output flush x_off_MiB x_addr y_addr flush_addr median_us mean_us q1_us q3_us")
    for (i, j, f, o), (x, y, fl), t in zip(places, views, times):
        q = statistics.quantiles(t, n=4)
        print(f"{i} {j} {f} {o:g} {x.data_ptr():#x} {y.data_ptr():#x} {fl.data_ptr():#x} "
              f"{statistics.median(t):.3f} {statistics.fmean(t):.3f} {q[0]:.3f} {q[2]:.3f}")


if __name__ == "__main__":
    main()
