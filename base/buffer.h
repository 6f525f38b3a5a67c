/* A view of an N-dimensional float array (N = 1..4): how images cross module boundaries
 * (interpreter, generated code, the image type) without those modules knowing each other.
 * Element (i0, i1, i2, i3) lives at data[i0*stride[0] + i1*stride[1] + ...]; strides are in
 * floats. Unused dimensions have extent 1. A pf_image (dataset/image.h) of W x H x C is the view
 * {extent = {W, H, C}, stride = {1, stride, plane}}. */
#ifndef PF_BASE_BUFFER_H
#define PF_BASE_BUFFER_H

#include <stdbool.h>
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

/* Whether b's elements are packed: x, then y, ... without gaps (a device copy is one transfer). */
static inline bool pf_buffer_dense(const pf_buffer *b)
{
    int64_t s = 1;
    for (int d = 0; d < b->ndims; d++) {
        if (b->extent[d] > 1 && b->stride[d] != s)
            return false;
        s *= b->extent[d];
    }
    return true;
}

/* Copies between the strided view b and a packed array, either way (to_flat: into flat). */
static inline void pf_buffer_pack(const pf_buffer *b, float *flat, bool to_flat)
{
    int64_t e[4] = { 1, 1, 1, 1 }, st[4] = { 0, 0, 0, 0 }, n = 0;
    for (int d = 0; d < b->ndims; d++)
        e[d] = b->extent[d], st[d] = b->stride[d];
    for (int64_t i3 = 0; i3 < e[3]; i3++)
        for (int64_t i2 = 0; i2 < e[2]; i2++)
            for (int64_t i1 = 0; i1 < e[1]; i1++) {
                float *row = b->data + i3 * st[3] + i2 * st[2] + i1 * st[1];
                for (int64_t i0 = 0; i0 < e[0]; i0++, n++)
                    if (to_flat)
                        flat[n] = row[i0 * st[0]];
                    else
                        row[i0 * st[0]] = flat[n];
            }
}

#endif
