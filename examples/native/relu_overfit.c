/* A wrong native CPU candidate for examples/problems/relu.py: a leaky ReLU (0.01 x below
 * zero) where the problem asks for max(x, 0). On KernelBench's own inputs (U[0,1)) the two
 * agree; kbv's hidden cases draw negative values too, so it is `overfit`:
 * right on the problem's own inputs, wrong on hidden ones. */
#include "kbv_native.h"

int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs, void *stream) {
    (void)stream;
    if (n_inputs < 1 || n_outputs != 1 || inputs[0].dtype != KBV_NATIVE_FLOAT32) return 1;
    int64_t n = 1;
    for (int d = 0; d < inputs[0].ndim; d++) n *= inputs[0].shape[d];
    const float *x = inputs[0].data;
    float *y = outputs[0].data;
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i]; /* the bug */
    return 0;
}
