/* timer.h -- kbv-worker's GPU clock: one sample of a call, timed with CUDA events on a
 * stream kbv owns (docs/timing.md).
 *
 * A verified sample: reset persisting L2 lines, overwrite 2x the L2 and discard those lines
 * (no dirty write-back left for the call to pay; sm_80 and later), queue a cushion kernel
 * that holds the stream while the call is queued (so launch latency stays outside the timed
 * region), SM-0 clock stamp, start event, the call, stop event, clock stamp, release the
 * cushion, device-wide synchronize (work that escaped the stream still finishes before the
 * next sample), elapsed time and the SM clock over the sample.
 * A standard sample is KernelBench's: synchronize, 256 MB L2 clear, events on the current
 * (legacy default) stream around the call, synchronize.
 * Built without CUDA, every call fails with "built without CUDA".
 */
#ifndef KBV_GPU_TIMER_H
#define KBV_GPU_TIMER_H

#include <stdint.h>

#include "../util.h"

typedef struct gpu_timer gpu_timer;

typedef struct gpu_sample {
    double ms;           /* stop - start event, milliseconds */
    double sm_mhz;       /* SM 0's clock over the sample; 0 when no stamp landed on SM 0 */
    int throttled;       /* sm_mhz below 0.75 of the peak clock: discard the sample */
    int cushion_expired; /* the call took longer to queue than the cushion waits (or it synchronised) */
} gpu_sample;

/* The timed call: returns 0, or -1 with a Python exception pending. */
typedef int (*gpu_timed_fn)(void *ctx);

int gpu_timer_create(gpu_timer **t, kbv_err *err);
void gpu_timer_destroy(gpu_timer *t);
/* The stream, as the integer torch.cuda.ExternalStream takes. */
uintptr_t gpu_timer_stream(const gpu_timer *t);
double gpu_timer_peak_mhz(const gpu_timer *t);
long long gpu_timer_l2_bytes(const gpu_timer *t);
/* Peak DRAM bandwidth from the memory clock and bus width (2 transfers a clock), GB/s. */
double gpu_timer_peak_gbs(const gpu_timer *t);

/* One verified sample. Returns 0; -1 with err set on a CUDA error (a sticky error from the
 * call's kernels surfaces here); *call_failed = 1 when fn returned -1 (sample not valid). */
int gpu_timer_sample(gpu_timer *t, gpu_timed_fn fn, void *ctx, gpu_sample *out, int *call_failed, kbv_err *err);
/* One sample by KernelBench's method (standard protocol). */
int gpu_timer_sample_standard(gpu_timer *t, gpu_timed_fn fn, void *ctx, gpu_sample *out, int *call_failed, kbv_err *err);
/* Reset persisting L2 lines, overwrite 2x the L2 on the timer's stream, and wait: the caches
 * as a timed sample finds them (the audit's call runs after this). */
int gpu_timer_flush(gpu_timer *t, kbv_err *err);
/* Queue the empty kernel on the timer's stream (a gpu_timed_fn; ctx is the timer). */
int gpu_timer_launch_empty(void *timer);

#endif
