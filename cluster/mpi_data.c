/* --broadcast-data: for nodes without a shared filesystem, rank 0 reads the program and the
 * images the run uses and broadcasts them as one blob; one worker rank per node writes them to
 * a node-local directory with a manifest of just those images, and every worker of the node
 * reads them from there (once, as from a shared path).
 *
 * The blob: "PFDATA1\n", then per file: u32 name length, the name (relative: program.pf,
 * manifest.tsv, then the manifest's file names), u64 size, the bytes. */
#include "cluster/mpi_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "dataset/manifest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "PFDATA1\n"
#define MAX_FILE_BYTES ((size_t)1 << 30)

static void put_file(pf_strbuf *sb, const char *name, const char *data, size_t len)
{
    uint32_t n = (uint32_t)strlen(name);
    uint64_t size = len;
    pf_sb_putn(sb, (const char *)&n, sizeof n);
    pf_sb_putn(sb, name, n);
    pf_sb_putn(sb, (const char *)&size, sizeof size);
    pf_sb_putn(sb, data, len);
}

static int put_path(pf_strbuf *sb, const char *name, const char *path, pf_error *err)
{
    char *data;
    size_t len;
    if (pf_read_file(path, MAX_FILE_BYTES, &data, &len, err) != 0)
        return -1;
    put_file(sb, name, data, len);
    free(data);
    return 0;
}

/* The entries the config selects, as pf_eval_image_list does: per split, those of the
 * resolution, the first max_images of them (and of the low-fidelity training images). */
static pf_manifest *selected(const pf_eval_config *cfg, pf_error *err)
{
    pf_manifest *all = pf_manifest_load(cfg->dataset, err);
    if (!all)
        return NULL;
    pf_manifest *sel = pf_manifest_new(all->dir);
    int taken[PF_SPLIT_COUNT] = { 0 }, taken_low = 0;
    for (size_t i = 0; i < all->count; i++) {
        const pf_manifest_entry *e = &all->entries[i];
        pf_manifest_filter f = PF_MANIFEST_ANY;
        f.width = cfg->width;
        f.height = cfg->height;
        /* a multi-fidelity run's training images at the low resolution (PF_SET_LOW) */
        bool low = cfg->low_width > 0 && e->split == PF_SPLIT_TRAIN &&
                   e->width == cfg->low_width && e->height == cfg->low_height;
        int *count = low ? &taken_low : &taken[e->split];
        if (!(low || pf_manifest_entry_matches(e, &f)) ||
            (cfg->max_images > 0 && *count >= cfg->max_images))
            continue;
        (*count)++;
        pf_manifest_add(sel, e);
    }
    pf_manifest_free(all);
    return sel;
}

static int pack(const pf_eval_config *cfg, pf_strbuf *sb, pf_error *err)
{
    pf_sb_puts(sb, MAGIC);
    if (put_path(sb, "program.pf", cfg->program, err) != 0)
        return -1;
    pf_manifest *m = selected(cfg, err);
    if (!m)
        return -1;
    pf_strbuf text;
    pf_sb_init(&text);
    pf_manifest_format(m, &text);
    put_file(sb, "manifest.tsv", pf_sb_str(&text), text.len);
    pf_sb_free(&text);
    int rc = 0;
    for (size_t i = 0; i < m->count && rc == 0; i++)
        rc = put_path(sb, m->entries[i].file, m->entries[i].path, err);
    pf_manifest_free(m);
    return rc;
}

/* A relative name that stays inside the directory. */
static bool safe_name(const char *name)
{
    if (!*name || name[0] == '/')
        return false;
    for (const char *p = name; p; p = strchr(p, '/')) {
        if (*p == '/')
            p++;
        if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || !p[2]))
            return false;
    }
    return true;
}

static int write_one(const char *dir, const char *name, const char *data, size_t len,
                     char ***written, int *n, pf_error *err)
{
    if (!safe_name(name))
        return pf_fail(err, "broadcast data: a bad file name '%s'", name);
    char *path = pf_xmalloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    int rc = pf_mkdir_p(path, err);
    *slash = '/';
    if (rc == 0)
        rc = pf_write_file_atomic(path, data, len, err);
    *written = pf_xrealloc(*written, sizeof **written * (size_t)(*n + 2));
    (*written)[(*n)++] = path;
    (*written)[*n] = NULL;
    return rc;
}

static int unpack(const char *blob, size_t size, const char *dir, char ***written,
                  pf_error *err)
{
    size_t at = strlen(MAGIC);
    if (size < at || memcmp(blob, MAGIC, at) != 0)
        return pf_fail(err, "broadcast data: not a perfora data blob");
    int n = 0, rc = 0;
    while (at < size && rc == 0) {
        uint32_t nl;
        uint64_t len;
        if (size - at < sizeof nl)
            return pf_fail(err, "broadcast data: truncated");
        memcpy(&nl, blob + at, sizeof nl);
        at += sizeof nl;
        if (size - at < (size_t)nl + sizeof len)
            return pf_fail(err, "broadcast data: truncated");
        char *name = pf_xmalloc(nl + 1);
        memcpy(name, blob + at, nl);
        name[nl] = '\0';
        at += nl;
        memcpy(&len, blob + at, sizeof len);
        at += sizeof len;
        rc = len > size - at ? pf_fail(err, "broadcast data: truncated")
                             : write_one(dir, name, blob + at, (size_t)len, written, &n, err);
        at += (size_t)len;
        free(name);
    }
    return rc;
}

/* One worker rank per node writes: the lowest rank of the node that is not rank 0. */
static bool node_writer(pf_mpi *m)
{
    int lowest_worker = m->rank == 0 ? m->size : m->rank, w;
    MPI_Allreduce(&lowest_worker, &w, 1, MPI_INT, MPI_MIN, m->node);
    return m->rank == w;
}

int pf_mpi_share_data(pf_mpi *m, pf_eval_config *cfg, const char *dir, char ***written,
                      pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    int rc = 0;
    if (m->rank == 0)
        rc = pack(cfg, &sb, err);
    /* rank 0 broadcasts even after a failure (an empty blob), so no rank waits forever */
    char *blob = m->rank == 0 ? (rc == 0 ? sb.data : (char *)"") : NULL;
    long long n = m->rank == 0 && rc == 0 ? (long long)sb.len : 0;
    if (pf_mpi_bcast_bytes(&blob, &n, err) != 0)
        rc = -1;
    bool writer = node_writer(m);
    if (written)
        *written = NULL;
    if (m->rank != 0 && rc == 0 && writer)
        rc = n == 0 ? pf_fail(err, "rank 0 could not read the data to broadcast")
                    : unpack(blob, (size_t)n, dir, written, err);
    int bad = rc != 0 && writer, any_bad;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, m->node);
    if (m->rank != 0)
        free(blob);
    pf_sb_free(&sb);
    if (rc != 0)
        return -1;
    if (any_bad)
        return pf_fail(err, "rank %d: the node's copy of the broadcast data could not be written",
                       m->rank);
    if (m->rank != 0) {
        char *program = pf_xmalloc(strlen(dir) + 16);
        sprintf(program, "%s/program.pf", dir);
        free(cfg->program);
        cfg->program = program;
        free(cfg->dataset);
        cfg->dataset = pf_xstrdup(dir);
    }
    return 0;
}
