/* Antialiased resampling for the image benchmark: a separable Lanczos-3 filter whose kernel is
 * widened by the scale factor when downscaling (so it low-passes at the new Nyquist rate instead
 * of aliasing), over a real-valued source window (so a crop to the target's aspect ratio needs no
 * rounding), and the benchmark's photo path built on it.
 *
 * Example: a 1 px black/white checkerboard downscaled 4x comes out uniformly 0.5 (pf_resample)
 * or, through the photo path, 0.735 (the sRGB value of linear 0.5); a constant stays constant. */
#ifndef PF_DATASET_RESAMPLE_H
#define PF_DATASET_RESAMPLE_H

#include "dataset/image.h"

/* The Lanczos-3 kernel: sinc(x) sinc(x / 3) for |x| < 3, else 0. */
double pf_lanczos3(double x);

/* A source rectangle in pixel coordinates: pixel (i, j) covers [i, i+1) x [j, j+1), so its
 * centre is (i + 0.5, j + 0.5). */
typedef struct pf_window {
    double x0, y0, w, h;
} pf_window;

/* The largest window of aspect out_w:out_h inside a width x height image, centred along the
 * axis that is not cropped; along the cropped axis `anchor` places it: 0 = left/top edge,
 * 0.5 = centre, 1 = right/bottom edge. */
pf_window pf_crop_window(int width, int height, int out_w, int out_h, double anchor);

/* Resamples `win` of img to out_w x out_h, every channel alike, values as stored (no colour
 * conversion, no clamping). Filter taps that fall outside the image repeat its edge pixels, so
 * a window inside the image uses real neighbours beyond the window's edge. Weights are
 * normalised to sum to 1. Deterministic: a fixed order of double-precision sums. */
pf_image *pf_resample_window(const pf_image *img, pf_window win, int out_w, int out_h,
                             pf_error *err);

/* The whole image to out_w x out_h (the aspect ratio may change). */
pf_image *pf_resample(const pf_image *img, int out_w, int out_h, pf_error *err);

/* The benchmark's path from a decoded photo to one of its sizes: RGB (alpha dropped, gray
 * replicated), the pf_crop_window of the target's aspect, sRGB -> linear light, Lanczos-3,
 * linear -> sRGB, clamped to [0,1] and rounded to the 8-bit grid (exactly what a PNG of it
 * holds). Resampling in linear light averages light, not gamma-encoded numbers, so fine
 * detail neither darkens nor shifts colour when it is averaged away. */
pf_image *pf_resample_photo(const pf_image *img, int out_w, int out_h, double anchor,
                            pf_error *err);

#endif
