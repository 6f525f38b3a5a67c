/* Colour-space conversions. Arithmetic is in double and rounded once to float, so chained
 * conversions lose only the float rounding of each stored result. */
#include "dataset/colour.h"

#include <math.h>

const float pf_white_d65[3] = { 0.9504700f, 1.0000001f, 1.0888300f };
const float pf_white_d50_proto[3] = { 0.9642f, 1.0f, 0.8249f };

/* Linear sRGB -> XYZ (D65) and its inverse (Lindbloom's sRGB matrices). */
static const double srgb_to_xyz[3][3] = {
    { 0.4124564, 0.3575761, 0.1804375 },
    { 0.2126729, 0.7151522, 0.0721750 },
    { 0.0193339, 0.1191920, 0.9503041 },
};
static const double xyz_to_srgb[3][3] = {
    { 3.2404542, -1.5371385, -0.4985314 },
    { -0.9692660, 1.8760108, 0.0415560 },
    { 0.0556434, -0.2040259, 1.0572252 },
};

/* imdist.py: the Bradford-adapted sRGB -> XYZ(D50) matrix and the inverse it uses. */
static const double proto_to_xyz[3][3] = {
    { 0.4360747, 0.3850649, 0.1430804 },
    { 0.2225045, 0.7168786, 0.0606169 },
    { 0.0139322, 0.0971045, 0.7141733 },
};
static const double proto_from_xyz[3][3] = {
    { 3.1338561, -1.6168667, -0.4906146 },
    { -0.9787684, 1.9161415, 0.0334540 },
    { 0.0719453, -0.2289914, 1.4052427 },
};

static const double yuv_fwd[3][3] = {
    { 0.299, 0.587, 0.114 },
    { -0.14713, -0.28886, 0.436 },
    { 0.615, -0.51499, -0.10001 },
};
static const double yuv_inv[3][3] = {
    { 1.0, 0.0, 1.13983 },
    { 1.0, -0.39465, -0.58060 },
    { 1.0, 2.03211, 0.0 },
};

/* JFIF: Cb = (B - Y) / 1.772, Cr = (R - Y) / 1.402 with Kr = .299, Kb = .114. */
static const double ycc_fwd[3][3] = {
    { 0.299, 0.587, 0.114 },
    { -0.168735891647856, -0.331264108352144, 0.5 },
    { 0.5, -0.418687589158345, -0.081312410841655 },
};
static const double ycc_inv[3][3] = {
    { 1.0, 0.0, 1.402 },
    { 1.0, -0.344136286201022, -0.714136286201022 },
    { 1.0, 1.772, 0.0 },
};

static void mat3(const double m[3][3], const double in[3], double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = m[i][0] * in[0] + m[i][1] * in[1] + m[i][2] * in[2];
}

static void mat3f(const double m[3][3], const float in[3], float out[3])
{
    double a[3] = { in[0], in[1], in[2] }, b[3];
    mat3(m, a, b);
    for (int i = 0; i < 3; i++)
        out[i] = (float)b[i];
}

static double srgb_to_linear_d(double v)
{
    double a = fabs(v);
    double r = a <= 0.04045 ? a / 12.92 : pow((a + 0.055) / 1.055, 2.4);
    return v < 0 ? -r : r;
}

static double linear_to_srgb_d(double v)
{
    double a = fabs(v);
    double r = a <= 0.0031308 ? a * 12.92 : 1.055 * pow(a, 1.0 / 2.4) - 0.055;
    return v < 0 ? -r : r;
}

float pf_srgb_to_linear(float v)
{
    return (float)srgb_to_linear_d(v);
}

float pf_linear_to_srgb(float v)
{
    return (float)linear_to_srgb_d(v);
}

void pf_linear_rgb_to_xyz(const float rgb[3], float xyz[3])
{
    mat3f(srgb_to_xyz, rgb, xyz);
}

void pf_xyz_to_linear_rgb(const float xyz[3], float rgb[3])
{
    mat3f(xyz_to_srgb, xyz, rgb);
}

/* The CIE f(t) and its inverse for given epsilon and kappa. */
static double lab_f(double t, double eps, double kappa)
{
    return t > eps ? cbrt(t) : (kappa * t + 16.0) / 116.0;
}

static double lab_f_inv(double f, double eps, double kappa)
{
    double f3 = f * f * f;
    return f3 > eps ? f3 : (116.0 * f - 16.0) / kappa;
}

#define PF_CIE_EPS (216.0 / 24389.0)
#define PF_CIE_KAPPA (24389.0 / 27.0)
#define PF_PROTO_EPS 0.008856
#define PF_PROTO_KAPPA 903.3

static void xyz_to_lab_d(const double xyz[3], const float white[3], double eps, double kappa,
                         double lab[3])
{
    double fx = lab_f(xyz[0] / white[0], eps, kappa);
    double fy = lab_f(xyz[1] / white[1], eps, kappa);
    double fz = lab_f(xyz[2] / white[2], eps, kappa);
    lab[0] = 116.0 * fy - 16.0;
    lab[1] = 500.0 * (fx - fy);
    lab[2] = 200.0 * (fy - fz);
}

/* CIE inverse: L* decides Y directly (kappa * eps = 8), X and Z go through f^-1. imdist.py's
 * lab2xyz has the same branches. */
static void lab_to_xyz_d(const double lab[3], const float white[3], double eps, double kappa,
                         double xyz[3])
{
    double fy = (lab[0] + 16.0) / 116.0;
    double fx = fy + lab[1] / 500.0, fz = fy - lab[2] / 200.0;
    double y = lab[0] > kappa * eps ? fy * fy * fy : lab[0] / kappa;
    xyz[0] = lab_f_inv(fx, eps, kappa) * white[0];
    xyz[1] = y * white[1];
    xyz[2] = lab_f_inv(fz, eps, kappa) * white[2];
}

void pf_xyz_to_lab(const float xyz[3], const float white[3], float lab[3])
{
    double a[3] = { xyz[0], xyz[1], xyz[2] }, b[3];
    xyz_to_lab_d(a, white, PF_CIE_EPS, PF_CIE_KAPPA, b);
    for (int i = 0; i < 3; i++)
        lab[i] = (float)b[i];
}

void pf_lab_to_xyz(const float lab[3], const float white[3], float xyz[3])
{
    double a[3] = { lab[0], lab[1], lab[2] }, b[3];
    lab_to_xyz_d(a, white, PF_CIE_EPS, PF_CIE_KAPPA, b);
    for (int i = 0; i < 3; i++)
        xyz[i] = (float)b[i];
}

void pf_srgb_to_lab(const float rgb[3], float lab[3])
{
    double lin[3], xyz[3], out[3];
    for (int i = 0; i < 3; i++)
        lin[i] = srgb_to_linear_d(rgb[i]);
    mat3(srgb_to_xyz, lin, xyz);
    xyz_to_lab_d(xyz, pf_white_d65, PF_CIE_EPS, PF_CIE_KAPPA, out);
    for (int i = 0; i < 3; i++)
        lab[i] = (float)out[i];
}

void pf_lab_to_srgb(const float lab[3], float rgb[3])
{
    double in[3] = { lab[0], lab[1], lab[2] }, xyz[3], lin[3];
    lab_to_xyz_d(in, pf_white_d65, PF_CIE_EPS, PF_CIE_KAPPA, xyz);
    mat3(xyz_to_srgb, xyz, lin);
    for (int i = 0; i < 3; i++)
        rgb[i] = (float)linear_to_srgb_d(lin[i]);
}

void pf_linear_to_lab_proto(const float lin[3], float lab[3])
{
    double l[3] = { lin[0], lin[1], lin[2] }, xyz[3], out[3];
    mat3(proto_to_xyz, l, xyz);
    xyz_to_lab_d(xyz, pf_white_d50_proto, PF_PROTO_EPS, PF_PROTO_KAPPA, out);
    for (int i = 0; i < 3; i++)
        lab[i] = (float)out[i];
}

/* imdist.py's rgb2xyz linearises with the plain (not odd-extended) curve; on [0,1] they agree. */
void pf_srgb_to_lab_proto(const float rgb[3], float lab[3])
{
    double l[3], xyz[3], out[3];
    for (int i = 0; i < 3; i++)
        l[i] = srgb_to_linear_d(rgb[i]);
    mat3(proto_to_xyz, l, xyz);
    xyz_to_lab_d(xyz, pf_white_d50_proto, PF_PROTO_EPS, PF_PROTO_KAPPA, out);
    for (int i = 0; i < 3; i++)
        lab[i] = (float)out[i];
}

void pf_lab_proto_to_srgb(const float lab[3], float rgb[3])
{
    double in[3] = { lab[0], lab[1], lab[2] }, xyz[3], lin[3];
    lab_to_xyz_d(in, pf_white_d50_proto, PF_PROTO_EPS, PF_PROTO_KAPPA, xyz);
    mat3(proto_from_xyz, xyz, lin);
    for (int i = 0; i < 3; i++)
        rgb[i] = (float)linear_to_srgb_d(lin[i]);
}

void pf_rgb_to_yuv(const float rgb[3], float yuv[3])
{
    mat3f(yuv_fwd, rgb, yuv);
}

void pf_yuv_to_rgb(const float yuv[3], float rgb[3])
{
    mat3f(yuv_inv, yuv, rgb);
}

void pf_rgb_to_ycbcr(const float rgb[3], float ycc[3])
{
    mat3f(ycc_fwd, rgb, ycc);
    ycc[1] += 0.5f;
    ycc[2] += 0.5f;
}

void pf_ycbcr_to_rgb(const float ycc[3], float rgb[3])
{
    float c[3] = { ycc[0], ycc[1] - 0.5f, ycc[2] - 0.5f };
    mat3f(ycc_inv, c, rgb);
}

/* --- whole images ---------------------------------------------------------------------------- */

static void pixel_srgb_to_linear(const float in[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = pf_srgb_to_linear(in[i]);
}

static void pixel_linear_to_srgb(const float in[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = pf_linear_to_srgb(in[i]);
}

static void pixel_xyz_to_lab(const float in[3], float out[3])
{
    pf_xyz_to_lab(in, pf_white_d65, out);
}

static void pixel_lab_to_xyz(const float in[3], float out[3])
{
    pf_lab_to_xyz(in, pf_white_d65, out);
}

typedef void (*pf_pixel_fn)(const float in[3], float out[3]);

/* ORDER pf_colour_conv */
static const pf_pixel_fn pixel_fns[] = {
    pixel_srgb_to_linear, pixel_linear_to_srgb, pf_linear_rgb_to_xyz, pf_xyz_to_linear_rgb,
    pixel_xyz_to_lab,     pixel_lab_to_xyz,     pf_srgb_to_lab,       pf_lab_to_srgb,
    pf_srgb_to_lab_proto, pf_lab_proto_to_srgb, pf_rgb_to_yuv,        pf_yuv_to_rgb,
    pf_rgb_to_ycbcr,      pf_ycbcr_to_rgb,
};

int pf_image_convert_colour(pf_image *img, pf_colour_conv conv, pf_error *err)
{
    if ((unsigned)conv >= sizeof pixel_fns / sizeof pixel_fns[0])
        return pf_fail(err, "unknown colour conversion %d", (int)conv);
    if (img->channels < 3)
        return pf_fail(err, "colour conversion needs 3 or 4 channels, the image has %d",
                       img->channels);
    pf_pixel_fn fn = pixel_fns[conv];
    for (int y = 0; y < img->height; y++) {
        float *r = pf_image_at(img, 0, y, 0), *g = pf_image_at(img, 0, y, 1);
        float *b = pf_image_at(img, 0, y, 2);
        for (int x = 0; x < img->width; x++) {
            float in[3] = { r[x], g[x], b[x] }, out[3];
            fn(in, out);
            r[x] = out[0];
            g[x] = out[1];
            b[x] = out[2];
        }
    }
    return 0;
}
