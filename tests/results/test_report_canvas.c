/* The report's drawing list, rasteriser, stroke font, axes and colour scale: pixels where the
 * drawing says, anti-aliased edges, dashes with gaps, text inside its box, SVG that an XML
 * parser accepts, ticks a person can read, and an error scale whose lightness rises evenly. */
#include "dataset/colour.h"
#include "results/report_canvas.h"
#include "results/report_internal.h"
#include "results/report_plot.h"
#include "tests/harness/harness.h"
#include "tests/results/report_test_util.h"

#include <libxml/parser.h>
#include <math.h>
#include <string.h>

static float px(const pf_image *img, int x, int y)  /* grey level: mean of the channels */
{
    return (*pf_image_at(img, x, y, 0) + *pf_image_at(img, x, y, 1) + *pf_image_at(img, x, y, 2))
           / 3;
}

static const pf_paint black2 = { 0x000000, PF_NONE, 2, 1, PF_DASH_SOLID };

static void test_line_is_drawn_with_soft_edges(void)
{
    pf_canvas *c = pf_canvas_new(60, 20, "line");
    pf_canvas_line(c, (double[4]){ 10, 10.25, 50, 10.25 }, 2, &black2);
    pf_image *img = pf_canvas_raster(c, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    /* it covers y 9.25 .. 11.25: row 9 by 75%, row 10 wholly, row 11 by 25% */
    PF_ASSERT_NEAR(px(img, 30, 9), 0.25, 0.03);
    CU_ASSERT(px(img, 30, 10) < 0.01f);
    PF_ASSERT_NEAR(px(img, 30, 11), 0.75, 0.03);
    CU_ASSERT(px(img, 30, 3) > 0.99f && px(img, 30, 16) > 0.99f);
    CU_ASSERT(px(img, 5, 10) > 0.99f && px(img, 56, 10) > 0.99f);  /* ends where it ends */
    pf_image_free(img);
    pf_canvas_free(c);
}

static void test_dashed_line_has_gaps(void)
{
    pf_canvas *c = pf_canvas_new(200, 10, "dashes");
    pf_paint p = black2;
    p.dash = PF_DASH_LONG;
    pf_canvas_line(c, (double[4]){ 5, 5, 195, 5 }, 2, &p);
    pf_image *img = pf_canvas_raster(c, 1, NULL);
    int changes = 0;
    for (int x = 6; x < 194; x++)
        changes += (px(img, x, 5) < 0.5f) != (px(img, x + 1, 5) < 0.5f);
    CU_ASSERT(changes >= 14);  /* 190 px in periods of 22 px (16 on with the caps, 6 off) */
    pf_image_free(img);
    pf_canvas_free(c);
}

static void test_markers_and_translucency(void)
{
    pf_canvas *c = pf_canvas_new(60, 30, "markers");
    pf_paint fill = { PF_NONE, 0x0000FF, 0, 0.5, PF_DASH_SOLID };
    pf_canvas_marker(c, 15, 15, PF_MARK_CIRCLE, 6, &fill, NULL);
    pf_paint ring = { 0xFF0000, 0xFFFFFF, 1.5, 1, PF_DASH_SOLID };
    pf_canvas_marker(c, 45, 15, PF_MARK_SQUARE, 6, &ring, "tip");
    pf_image *img = pf_canvas_raster(c, 1, NULL);
    PF_ASSERT_NEAR(*pf_image_at(img, 15, 15, 0), 0.5, 0.01);  /* half-opaque blue on white */
    PF_ASSERT_NEAR(*pf_image_at(img, 15, 15, 2), 1.0, 0.01);
    CU_ASSERT(px(img, 15, 26) > 0.99f);
    CU_ASSERT(px(img, 45, 15) > 0.99f);                      /* white inside */
    CU_ASSERT(*pf_image_at(img, 45 - 6, 15, 1) < 0.3f);      /* red outline, 5.3 px out */
    pf_image_free(img);
    pf_canvas_free(c);
}

/* The bounding box of the non-white pixels. */
static void ink_box(const pf_image *img, int *b)
{
    b[0] = b[1] = 1 << 30;
    b[2] = b[3] = -1;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            if (px(img, x, y) < 0.7f) {
                b[0] = x < b[0] ? x : b[0];
                b[1] = y < b[1] ? y : b[1];
                b[2] = x > b[2] ? x : b[2];
                b[3] = y > b[3] ? y : b[3];
            }
}

static void test_text_fits_its_width_and_rotates(void)
{
    double w = pf_text_width("speedup 4x", 20);
    CU_ASSERT(w > 60 && w < 160);
    CU_ASSERT(pf_text_width("WW", 20) > pf_text_width("ii", 20));
    CU_ASSERT(pf_text_width("\xCE\x94" "E", 20) > pf_text_width("E", 20));  /* Delta drawn */
    pf_canvas *c = pf_canvas_new(200, 200, "text");
    pf_canvas_text(c, 100, 40, "speedup 4x", 20, PF_ANCHOR_MIDDLE, 0, 0);
    pf_image *img = pf_canvas_raster(c, 1, NULL);
    int b[4];
    ink_box(img, b);
    CU_ASSERT(b[0] >= 100 - w / 2 - 2 && b[2] <= 100 + w / 2 + 2);  /* centred on x */
    CU_ASSERT(b[2] - b[0] > w * 0.8);
    CU_ASSERT(b[3] <= 40 + 7 && b[1] >= 40 - 20);                  /* on its baseline */
    pf_image_free(img);
    pf_canvas_free(c);
    c = pf_canvas_new(200, 200, "vertical");
    pf_canvas_text(c, 50, 100, "speedup 4x", 20, PF_ANCHOR_MIDDLE, -90, 0);
    img = pf_canvas_raster(c, 1, NULL);
    ink_box(img, b);
    CU_ASSERT(b[3] - b[1] > 2 * (b[2] - b[0]));  /* taller than wide */
    CU_ASSERT(b[0] < 50 - 10 && b[2] <= 50 + 7);  /* reads upwards: left of its baseline */
    pf_image_free(img);
    pf_canvas_free(c);
}

static void test_svg_is_well_formed(void)
{
    pf_canvas *c = pf_canvas_new(100, 80, "a <title> & \"quotes\"");
    pf_canvas_line(c, (double[6]){ 1, 1, 50, 50, 90, 10 }, 3, &black2);
    pf_paint p = { 0x0072B2, 0xFFFFFF, 1, 0.5, PF_DASH_DOT };
    pf_canvas_marker(c, 10, 10, PF_MARK_TRIANGLE, 4, &p, "variant <3> & more");
    pf_canvas_marker(c, 20, 10, PF_MARK_CIRCLE, 4, &p, NULL);
    pf_canvas_text(c, 5, 70, "error \xE2\x89\xA4 10 & <b>", 12, PF_ANCHOR_START, -90, 0);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_canvas_svg(c, &sb);
    xmlDocPtr doc = xmlReadMemory(sb.data, (int)sb.len, "x.svg", NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "/s:svg/s:polyline"), 1);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "/s:svg/s:polygon[s:title]"), 1);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "/s:svg/s:circle"), 1);
    CU_ASSERT_EQUAL(rt_xpath_count(doc, "/s:svg/s:text[@transform]"), 1);
    char *t = rt_xpath_string(doc, "/s:svg/s:text", 0);
    CU_ASSERT_STRING_EQUAL(t, "error \xE2\x89\xA4 10 & <b>");
    free(t);
    xmlFreeDoc(doc);
    pf_sb_free(&sb);
    pf_canvas_free(c);
}

static void test_png_through_libpng(void)
{
    pf_canvas *c = pf_canvas_new(40, 30, "png");
    pf_canvas_rect(c, 10, 10, 10, 10, &(pf_paint){ PF_NONE, 0xD55E00, 0, 1, PF_DASH_SOLID });
    const char *path = pf_test_tmp("canvas.png");
    CU_ASSERT_EQUAL_FATAL(pf_canvas_png(c, 2, path, NULL), 0);
    pf_image *img = pf_image_load(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    CU_ASSERT_EQUAL(img->width, 80);
    CU_ASSERT_EQUAL(img->height, 60);
    PF_ASSERT_NEAR(*pf_image_at(img, 30, 30, 0), 0xD5 / 255.0, 0.003);
    PF_ASSERT_NEAR(*pf_image_at(img, 30, 30, 1), 0x5E / 255.0, 0.003);
    CU_ASSERT(px(img, 5, 5) > 0.99f);
    pf_image_free(img);
    pf_canvas_free(c);
}

static void test_ticks_are_readable(void)
{
    pf_axis a = { 0 };
    pf_axis_fit(&a, 0.5, 16, true);
    a.suffix = "x";
    CU_ASSERT(a.lo < 0.5 && a.lo > 0.4 && a.hi > 16 && a.hi < 20);
    double t[32];
    int n = pf_axis_ticks(&a, t, 32);
    CU_ASSERT_EQUAL(n, 6);
    char buf[32];
    pf_axis_label(&a, t[0], buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "1/2x");
    pf_axis_label(&a, t[5], buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "16x");
    pf_axis_fit(&a, 1.0 / 32, 64, true);  /* wide: every other power, 1 among them */
    n = pf_axis_ticks(&a, t, 32);
    bool one = false;
    for (int i = 0; i < n; i++)
        one |= t[i] == 1;
    CU_ASSERT(one && n <= 7);
    pf_axis y = { 0 };
    pf_axis_fit(&y, 0, 13.2, false);
    CU_ASSERT_EQUAL(y.hi, 14);
    n = pf_axis_ticks(&y, t, 32);
    CU_ASSERT_EQUAL(n, 8);  /* 0, 2, .. 14 */
    pf_axis_label(&y, t[3], buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "6");
}

static void test_lines_are_clipped_to_the_plot(void)
{
    pf_canvas *c = pf_canvas_new(200, 200, "clip");
    pf_plot p = { .c = c, .x0 = 20, .y0 = 20, .x1 = 180, .y1 = 180 };
    pf_axis_fit(&p.x, 0, 10, false);
    pf_axis_fit(&p.y, 0, 10, false);
    pf_plot_frame(&p, "x", "y");
    int before = c->n;
    pf_plot_line(&p, (double[4]){ 5, 20, 5, 5 }, (double[4]){ 5, 5, 8, 30 }, 4, &black2);
    CU_ASSERT_EQUAL(c->n, before + 2);  /* in, out on the right, back in, out at the top */
    const pf_prim *l = &c->prims[before];
    PF_ASSERT_NEAR(l->xy[2], 180, 1e-9);
    CU_ASSERT(!pf_plot_inside(&p, 20, 5) && pf_plot_inside(&p, 10, 0));
    pf_canvas_free(c);
}

static void test_legend_wraps(void)
{
    pf_legend_entry e[6];
    for (int i = 0; i < 6; i++)
        e[i] = (pf_legend_entry){ "a rather long legend label", black2, false, 0, 0, black2 };
    double wide = pf_legend_height(e, 6, 2000), narrow = pf_legend_height(e, 6, 300);
    CU_ASSERT(narrow >= 5 * wide);
    double h = pf_text_block(NULL, 0, 0, 200, "one two three four five six seven eight nine "
                             "ten eleven twelve", 11, 0);
    CU_ASSERT(h > 11 * 1.3 * 1.5);  /* more than one line */
}

/* The error maps' scale: lightness rises steadily and successive colours differ by about the
 * same Delta E, inside the sRGB gamut (no clipping bends it). */
static void test_heat_scale_is_uniform(void)
{
    float prev[3] = { 0 };
    double step_min = 1e9, step_max = 0;
    for (int i = 0; i <= 16; i++) {
        uint32_t c = pf_report_heat_colour(i / 16.0, 1);
        float rgb[3] = { ((c >> 16) & 255) / 255.0f, ((c >> 8) & 255) / 255.0f,
                         (c & 255) / 255.0f }, lab[3];
        pf_srgb_to_lab(rgb, lab);
        if (i > 0) {
            CU_ASSERT(lab[0] > prev[0]);
            double d = sqrt(pow(lab[0] - prev[0], 2) + pow(lab[1] - prev[1], 2) +
                            pow(lab[2] - prev[2], 2));
            step_min = fmin(step_min, d);
            step_max = fmax(step_max, d);
        }
        memcpy(prev, lab, sizeof prev);
    }
    CU_ASSERT(step_max < 1.25 * step_min);
    CU_ASSERT_EQUAL(pf_report_heat_colour(5, 1), pf_report_heat_colour(1, 1));  /* clipped */
    CU_ASSERT_EQUAL(pf_report_heat_colour(-1, 1), pf_report_heat_colour(0, 1));
}

PF_TEST_SUITE(results_canvas, PF_TEST(test_line_is_drawn_with_soft_edges),
              PF_TEST(test_dashed_line_has_gaps), PF_TEST(test_markers_and_translucency),
              PF_TEST(test_text_fits_its_width_and_rotates), PF_TEST(test_svg_is_well_formed),
              PF_TEST(test_png_through_libpng), PF_TEST(test_ticks_are_readable),
              PF_TEST(test_lines_are_clipped_to_the_plot), PF_TEST(test_legend_wraps),
              PF_TEST(test_heat_scale_is_uniform))
