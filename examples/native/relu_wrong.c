/* A wrong native CPU candidate for examples/problems/relu.py: it reads each element's
 * neighbour (an off-by-one index). Wrong on the problem's own inputs as on kbv's hidden ones:
 * `incorrect`. */
#include "kbv_native.h"

int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs, void *stream) {
    (void)stream;
    if (n_inputs < 1 || n_outputs != 1 || inputs[0].dtype != KBV_NATIVE_FLOAT32) return 1;
    int64_t n = 1;
    for (int d = 0; d < inputs[0].ndim; d++) n *= inputs[0].shape[d];
    const float *x = inputs[0].data;
    float *y = outputs[0].data;
    for (int64_t i = 0; i < n; i++) y[i] = x[(i + 1) % n] > 0.0f ? x[(i + 1) % n] : 0.0f; /* the bug: i + 1 */
    return 0;
}
