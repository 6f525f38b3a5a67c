/* Colour spaces: sRGB <-> linear RGB <-> CIE XYZ (D65) <-> CIE L*a*b*, the authors' prototype's
 * D50 Lab (what the paper's error is measured in), the paper's YUV (bilateral grid) and JPEG's
 * YCbCr. Values are on the [0,1] scale of pf_image: RGB, linear RGB and XYZ with white Y = 1,
 * Y/U/V and Y/Cb/Cr likewise; L*a*b* on its usual scale (L* 0..100). */
#ifndef PF_DATASET_COLOUR_H
#define PF_DATASET_COLOUR_H

#include "dataset/image.h"

/* The D65 white of the sRGB matrix (its rows' sums), so sRGB white is exactly L*=100, a*=b*=0. */
extern const float pf_white_d65[3];
/* The prototype's D50 white (imdist.py REFERENCE_WHITE_*). */
extern const float pf_white_d50_proto[3];

/* --- one value or one pixel ------------------------------------------------------------------ */

/* IEC 61966-2-1 transfer curve; extended to any real input (odd-symmetric). */
float pf_srgb_to_linear(float v);
float pf_linear_to_srgb(float v);

/* Linear sRGB primaries, D65 <-> XYZ (the IEC matrix to 7 digits, as Lindbloom gives it). */
void pf_linear_rgb_to_xyz(const float rgb[3], float xyz[3]);
void pf_xyz_to_linear_rgb(const float xyz[3], float rgb[3]);

/* CIE 1976 L*a*b* relative to `white`, with the exact CIE constants (epsilon 216/24389,
 * kappa 24389/27). */
void pf_xyz_to_lab(const float xyz[3], const float white[3], float lab[3]);
void pf_lab_to_xyz(const float lab[3], const float white[3], float xyz[3]);

/* sRGB <-> L*a*b* (D65), through linear RGB and XYZ. */
void pf_srgb_to_lab(const float rgb[3], float lab[3]);
void pf_lab_to_srgb(const float lab[3], float rgb[3]);

/* The prototype's path (imdist.py rgb2lab / lab2rgb): linearised sRGB, the Bradford-adapted
 * sRGB -> XYZ(D50) matrix, D50 white (0.9642, 1, 0.8249), epsilon 0.008856, kappa 903.3. */
void pf_srgb_to_lab_proto(const float rgb[3], float lab[3]);
void pf_lab_proto_to_srgb(const float lab[3], float rgb[3]);
/* The first half of pf_srgb_to_lab_proto, for callers that linearise through their own table. */
void pf_linear_to_lab_proto(const float lin[3], float lab[3]);

/* The paper's YUV (bilateral_grid.py): Y = .299R + .587G + .114B, U = -.14713R - .28886G + .436B,
 * V = .615R - .51499G - .10001B; the inverse uses the paper's rounded coefficients
 * (R = Y + 1.13983V, G = Y - .39465U - .58060V, B = Y + 2.03211U), so a round trip is exact
 * only to about 1e-5. */
void pf_rgb_to_yuv(const float rgb[3], float yuv[3]);
void pf_yuv_to_rgb(const float yuv[3], float rgb[3]);

/* BT.601 full range as JPEG (JFIF) defines it, on [0,1]: chroma is centred on 0.5 (JFIF's 128
 * on 0..255 scale). The inverse is the exact matrix inverse. */
void pf_rgb_to_ycbcr(const float rgb[3], float ycc[3]);
void pf_ycbcr_to_rgb(const float ycc[3], float rgb[3]);

/* --- whole images ---------------------------------------------------------------------------- */

typedef enum pf_colour_conv {
    PF_SRGB_TO_LINEAR,   /* all colour channels through the transfer curve */
    PF_LINEAR_TO_SRGB,
    PF_LINEAR_TO_XYZ,
    PF_XYZ_TO_LINEAR,
    PF_XYZ_TO_LAB,       /* D65 white */
    PF_LAB_TO_XYZ,
    PF_SRGB_TO_LAB,      /* D65 */
    PF_LAB_TO_SRGB,
    PF_SRGB_TO_LAB_PROTO,
    PF_LAB_PROTO_TO_SRGB,
    PF_RGB_TO_YUV,
    PF_YUV_TO_RGB,
    PF_RGB_TO_YCBCR,
    PF_YCBCR_TO_RGB,
} pf_colour_conv;

/* Converts channels 0..2 in place (a fourth, alpha, channel is left alone). Fails for images
 * with fewer than 3 channels: a gray image has no colour to convert (pf_image_to_rgb first). */
int pf_image_convert_colour(pf_image *img, pf_colour_conv conv, pf_error *err);

#endif
