// OpenCV 4.6 comparators for bench_pipelines, where OpenCV has the operation:
//   blur       sepFilter2D per plane with the same 17 taps (float), then the black frame;
//   unsharp    sepFilter2D horizontally, the temp rows outside the interior set to 0 (what the
//              .pf's interior-only pass leaves), sepFilter2D vertically, addWeighted 3, -2;
//   bilateral  bilateralFilter d = 9, sigmaColor 0.08, sigmaSpace 4 on interleaved float RGB
//              (prepared outside the timed call): NOT the .pf's filter (centred circular window,
//              RGB L1 colour distance, a lookup table for exp, reflect-101 border) -- timing only;
//   median     medianBlur ksize 9 per plane on 8-bit planes (OpenCV's float median stops at
//              ksize 5); the bundled photos are 8-bit, so the conversion is exact; replicated
//              border instead of the truncated window, so only the interior is compared.
// The bilateral grid has no OpenCV counterpart.
#include "bench/cmp.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

struct cv_ctx {
    bench_app app;
    bench_img in, out;
    cv::Mat kx, ky, one;   // blur taps (17x1) and the 1-tap identity kernel
    cv::Mat inter_in, inter_out;  // bilateral: interleaved copies
    cv::Mat temp, mask;    // unsharp scratch (one plane)
    std::vector<cv::Mat> in8, out8;  // median: 8-bit planes
};

cv::Mat plane(const bench_img &im, int c)
{
    return cv::Mat(im.h, im.w, CV_32F, im.data + (long)c * im.plane,
                   (size_t)im.stride * sizeof(float));
}

void zero_frame(const cv::Mat &m, int f)
{
    m.rowRange(0, f).setTo(0);
    m.rowRange(m.rows - f, m.rows).setTo(0);
    m.colRange(0, f).setTo(0);
    m.colRange(m.cols - f, m.cols).setTo(0);
}

int cv_run(void *p)
{
    cv_ctx *h = (cv_ctx *)p;
    const bench_img &in = h->in, &out = h->out;
    switch (h->app) {
    case BENCH_BLUR:
        for (int c = 0; c < in.c; c++) {
            cv::Mat src = plane(in, c), dst = plane(out, c);
            cv::sepFilter2D(src, dst, CV_32F, h->kx, h->ky, cv::Point(-1, -1), 0,
                            cv::BORDER_CONSTANT);
            zero_frame(dst, 8);
        }
        break;
    case BENCH_UNSHARP:
        for (int c = 0; c < in.c; c++) {
            cv::Mat src = plane(in, c), dst = plane(out, c);
            cv::sepFilter2D(src, h->temp, CV_32F, h->kx, h->one, cv::Point(-1, -1), 0,
                            cv::BORDER_CONSTANT);
            h->temp.rowRange(0, 8).setTo(0);
            h->temp.rowRange(in.h - 8, in.h).setTo(0);
            cv::sepFilter2D(h->temp, h->mask, CV_32F, h->one, h->ky, cv::Point(-1, -1), 0,
                            cv::BORDER_CONSTANT);
            zero_frame(h->mask, 8);
            cv::addWeighted(src, 3.0, h->mask, 1.0 - 3.0, 0.0, dst);
        }
        break;
    case BENCH_BILATERAL:
        cv::bilateralFilter(h->inter_in, h->inter_out, 9, 0.08, 4.0);
        break;
    case BENCH_MEDIAN:
        for (int c = 0; c < in.c; c++)
            cv::medianBlur(h->in8[c], h->out8[c], 9);
        break;
    default:
        return -1;
    }
    return 0;
}

// Untimed: results that live elsewhere back into the float output.
void cv_finish(void *p)
{
    cv_ctx *h = (cv_ctx *)p;
    if (h->app == BENCH_MEDIAN) {
        for (int c = 0; c < h->out.c; c++)
            h->out8[c].convertTo(plane(h->out, c), CV_32F, 1.0 / 255.0);
    } else if (h->app == BENCH_BILATERAL) {
        std::vector<cv::Mat> planes;
        for (int c = 0; c < h->out.c; c++)
            planes.push_back(plane(h->out, c));
        cv::split(h->inter_out, planes);
    }
}

void cv_destroy(void *p)
{
    delete (cv_ctx *)p;
}

}  // namespace

extern "C" int bench_cv_make(bench_app app, const bench_img *in, const bench_img *out,
                             bench_method *m)
{
    memset(m, 0, sizeof *m);
    if (app == BENCH_BGRID) {
        snprintf(m->note, sizeof m->note, "no OpenCV counterpart");
        return -1;
    }
    cv_ctx *h = new cv_ctx;
    h->app = app;
    h->in = *in;
    h->out = *out;
    float A[17];
    bench_blur_taps(A);
    h->kx = cv::Mat(17, 1, CV_32F, A).clone();
    h->ky = h->kx.clone();
    h->one = cv::Mat::ones(1, 1, CV_32F);
    m->check = 1;
    m->x1 = in->w;
    m->y1 = in->h;
    if (app == BENCH_UNSHARP) {
        h->temp = cv::Mat(in->h, in->w, CV_32F);
        h->mask = cv::Mat(in->h, in->w, CV_32F);
    } else if (app == BENCH_BILATERAL) {
        std::vector<cv::Mat> planes;
        for (int c = 0; c < in->c; c++)
            planes.push_back(plane(*in, c));
        cv::merge(planes, h->inter_in);
        h->inter_out = cv::Mat(in->h, in->w, CV_32FC3);
        m->check = 0;
        snprintf(m->note, sizeof m->note,
                 "not the same filter: centred circular 9x9 window, RGB L1 colour distance, "
                 "exp by lookup table, reflect-101 border; interleaved input prepared untimed");
    } else if (app == BENCH_MEDIAN) {
        for (int c = 0; c < in->c; c++) {
            cv::Mat u8;
            plane(*in, c).convertTo(u8, CV_8U, 255.0);
            h->in8.push_back(u8);
            h->out8.push_back(cv::Mat(in->h, in->w, CV_8U));
        }
        m->x0 = m->y0 = 4;
        m->x1 = in->w - 4;
        m->y1 = in->h - 4;
        snprintf(m->note, sizeof m->note,
                 "8-bit planes (float medianBlur stops at ksize 5; exact for 8-bit photos), "
                 "replicated border: interior compared");
    }
    m->ctx = h;
    m->run = cv_run;
    m->finish = cv_finish;
    m->destroy = cv_destroy;
    return 0;
}

extern "C" void bench_cv_set_threads(int n)
{
    cv::setNumThreads(n);
}

extern "C" const char *bench_cv_version(void)
{
    return CV_VERSION;
}
