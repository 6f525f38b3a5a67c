/* Error metrics between a candidate image and its reference: the paper's mean CIE76 Delta E in the
 * prototype's D50 Lab, PSNR, and SSIM. Each returns 0 and writes *out, or -1 with err set when
 * the images cannot be compared (different sizes, too small for SSIM, ...). A NaN sample makes
 * the raw-float results NaN; the paper-mode quantiser maps NaN to 0 as the 8-bit save would. */
#ifndef PF_DATASET_METRICS_H
#define PF_DATASET_METRICS_H

#include "dataset/image.h"

/* The paper's error, exactly as imdist.py computes it (`get_distance('mean', 'lab', ...)`):
 * both images to Lab through pf_srgb_to_lab_proto (linearised sRGB, Bradford D50 matrix, D50
 * white, epsilon 0.008856, kappa 903.3), then the mean over pixels of the Euclidean distance
 * sqrt(dL^2 + da^2 + db^2). Only channels 0..2 are used; 1- and 2-channel images are gray
 * (R = G = B = channel 0), so a gray image may be compared with a colour one. Sizes must match.
 * This one works on the raw floats (values outside [0,1] go through the same formulas). */
int pf_metric_lab_de76(const pf_image *a, const pf_image *b, double *out, pf_error *err);

/* "Paper mode": the same after the prototype's 8-bit save of both images
 * (pf_image_quantize8_trunc: trunc(clamp(v,0,1) * 255) / 255), which is how the paper's numbers
 * were measured: from 8-bit PNGs. Use this to compare with the paper. */
int pf_metric_lab_de76_paper(const pf_image *a, const pf_image *b, double *out, pf_error *err);

/* The per-pixel Delta E behind the two above (1 channel, same size), for error heat maps. */
pf_image *pf_metric_lab_de76_map(const pf_image *a, const pf_image *b, int paper_mode,
                                 pf_error *err);

/* PSNR in dB with peak 1.0 over every channel and pixel: 10 log10(1 / MSE). Identical images
 * give +INFINITY (MSE = 0); callers that need a finite number must cap it themselves. Sizes and
 * channel counts must match. */
int pf_metric_psnr(const pf_image *a, const pf_image *b, double *out, pf_error *err);

/* SSIM of Wang, Bovik, Sheikh and Simoncelli 2004 as their ssim_index.m computes it: an 11x11
 * Gaussian window of sigma 1.5 (normalised), C1 = (0.01 L)^2, C2 = (0.03 L)^2 with L = 1, means
 * over the "valid" window positions only (no padding, no downsampling). Computed per channel on
 * every channel and averaged over channels (the usual colour convention). Sizes and channel
 * counts must match; both sides must be at least 11 pixels. */
int pf_metric_ssim(const pf_image *a, const pf_image *b, double *out, pf_error *err);

#endif
