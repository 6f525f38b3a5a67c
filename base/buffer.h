/* A view of an N-dimensional float array (N = 1..4): how images cross module boundaries
 * (interpreter, generated code, the image type) without those modules knowing each other.
 * Element (i0, i1, i2, i3) lives at data[i0*stride[0] + i1*stride[1] + ...]; strides are in
 * floats. Unused dimensions have extent 1. A pf_image (dataset/image.h) of W x H x C is the view
 * {extent = {W, H, C}, stride = {1, stride, plane}}. */
#ifndef PF_BASE_BUFFER_H
#define PF_BASE_BUFFER_H

#include <stdint.h>

#define PF_BUFFER_MAX_DIMS 4

typedef struct pf_buffer {
    float *data;
    int ndims;
    int64_t extent[PF_BUFFER_MAX_DIMS];
    int64_t stride[PF_BUFFER_MAX_DIMS];
} pf_buffer;

static inline int64_t pf_buffer_count(const pf_buffer *b)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndims; d++)
        n *= b->extent[d];
    return n;
}

#endif
