/* gen_host.h -- the CPU side of the input generator (gen.h) and the GPU entry points. */
#ifndef KBV_GEN_HOST_H
#define KBV_GEN_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"
#include "util.h"

/* Fill n elements of elem_size bytes each at out (host memory). */
void gen_fill_host(const kbv_gen_plan *g, void *out, int64_t n, size_t elem_size);
/* Zero elements where mask[i] != 0. */
void gen_mask_host(void *out, const uint8_t *mask, int64_t n, size_t elem_size);
/* Make each trailing [d, d] matrix symmetric by copying its upper triangle down. */
void gen_symmetrize_host(void *out, int64_t batch, int64_t d, size_t elem_size);
uint64_t gen_fingerprint_host(const void *data, uint64_t nbytes);

/* The same on the device (src/gpu/gen.cu); they fail with a message where CUDA is absent. */
int gpu_gen_fill(const kbv_gen_plan *g, void *dev_out, int64_t n, size_t elem_size, kbv_err *err);
int gpu_gen_mask(void *dev_out, const uint8_t *dev_mask, int64_t n, size_t elem_size, kbv_err *err);
int gpu_gen_symmetrize(void *dev_out, int64_t batch, int64_t d, size_t elem_size, kbv_err *err);
int gpu_fingerprint(const void *dev_data, uint64_t nbytes, uint64_t *out, kbv_err *err);

#endif
