/* A native CPU candidate for examples/problems/relu.py: y = max(x, 0), written in plain C.
 *   kbv eval examples/problems/relu.py examples/native/relu.c --device cpu
 * inputs[0] is x (float32); outputs[0] is y, preallocated by kbv with x's shape, contiguous. */
#include "kbv_native.h"

static const char *last_error = "";

const char *kbv_native_error(void) { return last_error; }

int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs, void *stream) {
    (void)stream; /* NULL on the CPU */
    if (n_inputs < 1 || n_outputs != 1) return last_error = "expected one input and one output", 1;
    const kbv_native_tensor *x = &inputs[0];
    if (x->dtype != KBV_NATIVE_FLOAT32 || outputs[0].dtype != KBV_NATIVE_FLOAT32) return last_error = "float32 only", 2;
    int64_t n = 1, expect = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        if (x->shape[d] != 1 && x->strides[d] != expect) return last_error = "x is not contiguous", 3;
        expect *= x->shape[d];
        n *= x->shape[d];
    }
    const float *in = x->data;
    float *out = outputs[0].data;
    for (int64_t i = 0; i < n; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return 0;
}
