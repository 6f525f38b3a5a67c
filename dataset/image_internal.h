/* Helpers shared by the image layer's own files (image.c, png_io.c, jpeg_io.c); not part of the
 * dataset/ interface. */
#ifndef PF_DATASET_IMAGE_INTERNAL_H
#define PF_DATASET_IMAGE_INTERNAL_H

#include "dataset/image.h"

#include <stdint.h>

/* Like pf_image_new, but nothing is zeroed: for decoders, which write every visible sample and
 * call pf_image_zero_padding for each row they finish. The image is then touched once instead
 * of twice, and a file that claims a huge size but ends early only touches the rows it held. */
pf_image *pf_image_new_for_decode(int width, int height, int channels, pf_error *err);
void pf_image_zero_padding(pf_image *img, int y);

/* Checks header dimensions against PF_IMAGE_MAX_SIDE / PF_IMAGE_MAX_PIXELS before anything is
 * allocated; the message says what is wrong, the caller prefixes the file name. */
int pf_image_check_dims(long long width, long long height, pf_error *err);

/* 8-bit value k -> k / 255.0f, the table every 8-bit decoder converts through. */
extern const float *pf_image_lut8(void);

/* The prototype's 8-bit save of one value: trunc(clamp(v,0,1) * 255), NaN -> 0. */
static inline int pf_image_q8_trunc(float v)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < 1.0f ? v : 1.0f;
    return (int)(v * 255.0f);
}

/* Quantisers for the savers: clamp to [0,1] (NaN -> 0), then round half up. */
static inline uint8_t pf_image_to_u8(float v)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < 1.0f ? v : 1.0f;
    return (uint8_t)(v * 255.0f + 0.5f);
}

static inline uint16_t pf_image_to_u16(float v)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < 1.0f ? v : 1.0f;
    return (uint16_t)(v * 65535.0f + 0.5f);
}

#endif
