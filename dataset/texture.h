/* The texturedness measure of Bae, Paris and Durand 2006 ("Two-scale tone management for
 * photographic look"), as the Image Perforation paper uses it: to classify benchmark photos
 * (Section 6: mean texture < 12 is "low", > 15 is "high", on 8-bit values at 820x614) and, with
 * a Gaussian in place of the bilateral filter, as the importance map of importance sampling. */
#ifndef PF_DATASET_TEXTURE_H
#define PF_DATASET_TEXTURE_H

#include "dataset/image.h"

/* Per-pixel texturedness map (1 channel, same size) of an image on the 0..255 scale, computed
 * as documented in texture.c. Returns NULL with err set on failure. */
pf_image *pf_texture_map(const pf_image *img, pf_error *err);

/* Mean of pf_texture_map over the image: the number the paper thresholds at 12 and 15. */
double pf_texture_mean(const pf_image *img, pf_error *err);

#endif
