/* A native CPU candidate with weights, for examples/problems/linear_relu.py:
 * y = relu(x W^T + b). kbv passes the forward's inputs, then the model's parameters in
 * named_parameters() order: inputs[0] = x [batch, in], inputs[1] = fc.weight [out, in],
 * inputs[2] = fc.bias [out]. They are the weights kbv checks the candidate with, including
 * its redrawn ones (the weight cases): a kernel that baked in any values would fail. */
#include "kbv_native.h"

static const char *last_error = "";

const char *kbv_native_error(void) { return last_error; }

int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs, void *stream) {
    (void)stream;
    if (n_inputs != 3 || n_outputs != 1) return last_error = "expected x, fc.weight, fc.bias and one output", 1;
    const kbv_native_tensor *x = &inputs[0], *w = &inputs[1], *b = &inputs[2];
    for (int i = 0; i < 3; i++)
        if (inputs[i].dtype != KBV_NATIVE_FLOAT32) return last_error = "float32 only", 2;
    if (x->ndim != 2 || w->ndim != 2 || b->ndim != 1 || x->shape[1] != w->shape[1] || b->shape[0] != w->shape[0])
        return last_error = "unexpected shapes", 3;
    int64_t rows = x->shape[0], k = x->shape[1], cols = w->shape[0];
    const float *xp = x->data, *wp = w->data, *bp = b->data;
    float *y = outputs[0].data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            float acc = 0.0f;
            for (int64_t i = 0; i < k; i++) acc += xp[r * x->strides[0] + i * x->strides[1]] * wp[c * w->strides[0] + i * w->strides[1]];
            acc += bp[c * b->strides[0]];
            y[r * cols + c] = acc > 0.0f ? acc : 0.0f;
        }
    return 0;
}
