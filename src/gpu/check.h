/* check.h -- the checked-CUDA-call macro of kbv-worker's C files (gpu.c, timer.c, audit.c):
 * on failure, return kbv_seterr() naming the call, the file:line and CUDA's message. */
#ifndef KBV_GPU_CHECK_H
#define KBV_GPU_CHECK_H

#include <cuda_runtime_api.h>

#include "../util.h"

#define GPU_CHECK(call, err)                                                                                                                  \
    do {                                                                                                                                      \
        cudaError_t e_ = (call);                                                                                                              \
        if (e_ != cudaSuccess)                                                                                                                \
            return kbv_seterr((err), "%s failed at %s:%d: %s (%s)", #call, __FILE__, __LINE__, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
    } while (0)

#endif
