/* --record and --replay against the books themselves: random allocations,
 * frees and a clear on books with 60 stacks, a sample after each step at a
 * known time; then the recording replayed at each of those times must give
 * the JSON report the live books gave at that moment (peak, per-stack
 * figures at the peak, temporary counts and frames included; the peak's
 * "seconds" is masked: it is the books' real clock, recorded to the µs).
 * Also: --diff between two times equals the difference of the two live
 * reports' heap figures, a cut or corrupted file is refused with a reason,
 * and the size bound ends the recording instead of passing it. */
#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/record/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "selftest/unit/test.h"

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char namebuf[2][64];
static void resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    (void)ctx;
    (void)frame_index;
    /* pcs ending in 7 stand for two frames: an inlined call and its caller */
    snprintf(namebuf[out->sub & 1], sizeof(namebuf[0]), "fn_%llx_%u", (unsigned long long)pc, out->sub);
    out->function = namebuf[out->sub & 1];
    out->file = pc % 3 ? "src/a.c" : NULL;
    out->module = "/lib/libx.so";
    out->offset = pc & 0xfff;
    out->line = (unsigned)(pc % 1000);
    if ((pc & 0xf) == 7 && out->sub == 0) {
        out->inlined = true;
        out->more = true;
    }
}

static char *report(const struct report_source *src, enum report_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report_options opt = { .format = fmt, .sort = REPORT_SORT_BYTES, .top = 0 };
    report_write(f, src, &opt);
    fclose(f);
    return buf;
}

/* The number after "seconds": becomes one '#'. */
static void mask_seconds(char *s)
{
    for (char *p = strstr(s, "\"seconds\": "); p; p = strstr(p + 1, "\"seconds\": ")) {
        char *q = p + 11, *e = q;
        while (*e && *e != ',' && *e != '}')
            e++;
        *q = '#';
        memmove(q + 1, e, strlen(e) + 1);
    }
}

static char *replayed(const struct recording *r, bool at_given, double at)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct replay_options o = { .report = { REPORT_JSON, REPORT_SORT_BYTES, 0 },
                                .at_given = at_given, .at = at };
    CHECK(replay_report(f, r, &o) == 0);
    fclose(f);
    return buf;
}

static long long json_num(const char *s, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    const char *p = strstr(s, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -999999;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)sz + 1);
    *n = fread(d, 1, (size_t)sz, f);
    fclose(f);
    return d;
}

enum { STEPS = 400, NSTACKS = 60 };

int main(void)
{
    char path[] = "/tmp/test_record.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    char why[256];
    struct recorder *rec = recorder_open(path, 100, 0, why, sizeof(why));
    CHECK(rec != NULL, "%s", why);
    recorder_start(rec, 42, 0, "prog", "ptrace");

    struct heap_books *b = heap_books_new();
    struct stack_table *st = stack_table_new();
    uint32_t ids[NSTACKS];
    for (unsigned s = 0; s < NSTACKS; s++) {
        uint64_t pcs[6];
        unsigned n = (unsigned)(s % 6);
        for (unsigned k = 0; k < n; k++)
            pcs[k] = 0x1000 * (s + 1) + 0x10 * k + (k == 1 ? 7 : 3);
        ids[s] = stack_table_intern(st, pcs, n);
    }
    struct report_source src = { .books = b, .stacks = st, .resolve = resolve, .pid = 42,
                                 .program = "prog", .engine = "ptrace" };
    uint64_t live[4096];
    size_t nlive = 0;
    uint64_t next_addr = 0x100000;
    char *snaps[STEPS];
    double times[STEPS];
    for (int i = 0; i < STEPS; i++) {
        unsigned ops = 1 + (unsigned)(rnd() % 8);
        for (unsigned k = 0; k < ops; k++) {
            heap_set_thread(b, 1 + (uint32_t)(rnd() % 2));
            if (nlive && (rnd() % 100 < (i < STEPS / 2 ? 35u : 60u))) {
                size_t j = rnd() % nlive;
                heap_record_free(b, live[j], ALLOC_MALLOC, NULL);
                live[j] = live[--nlive];
            } else if (nlive < 4096) {
                uint64_t a = next_addr += 0x100;
                heap_record_alloc(b, a, 1 + rnd() % 5000, ids[rnd() % NSTACKS], ALLOC_MALLOC);
                live[nlive++] = a;
            }
        }
        if (i == STEPS / 3) {
            heap_clear(b);
            nlive = 0;
        }
        times[i] = 0.25 * (i + 1);
        recorder_sample(rec, &src, times[i], true);
        snaps[i] = report(&src, REPORT_JSON);
        mask_seconds(snaps[i]);
    }
    /* an exec: new books and a new stack table (ids from 1 again, other
     * frames), the recording goes on */
    struct heap_books *b2 = heap_books_new();
    struct stack_table *st2 = stack_table_new();
    uint32_t ids2[8];
    for (unsigned s2 = 0; s2 < 8; s2++) {
        uint64_t pcs[2] = { 0x900000 + s2 * 0x40, 0x910003 };
        ids2[s2] = stack_table_intern(st2, pcs, 2);
    }
    struct report_source src2 = src;
    src2.books = b2;
    src2.stacks = st2;
    double base = times[STEPS - 1];
    recorder_rebase(rec, base + 0.2);   /* the exec, 0.2 s after the last sample */
    enum { STEPS2 = 30 };
    char *snaps2[STEPS2];
    double times2[STEPS2];
    for (int i = 0; i < STEPS2; i++) {
        heap_record_alloc(b2, 0x700000 + 0x100 * (uint64_t)i, 10 + (uint64_t)i, ids2[i % 8], ALLOC_MALLOC);
        if (i % 3 == 2)
            heap_record_free(b2, 0x700000 + 0x100 * (uint64_t)(i - 1), ALLOC_MALLOC, NULL);
        times2[i] = base + 0.25 * (i + 1);
        recorder_sample(rec, &src2, times2[i], true);
        snaps2[i] = report(&src2, REPORT_JSON);
        mask_seconds(snaps2[i]);
    }
    CHECK(recorder_close(rec) == 0);

    size_t len;
    uint8_t *data = slurp(path, &len);
    CHECK(data != NULL);
    struct recording r;
    CHECK(recording_parse(data, len, &r, why, sizeof(why)) == 0, "%s", why);
    printf("recording: %zu bytes, %zu samples, %zu stacks, %zu frames\n", len, r.nsamples,
           r.nstacks - 1, r.nframes);
    int bad = 0;
    for (int i = 0; i < STEPS; i++) {
        char *got = replayed(&r, true, times[i] + 0.1);
        mask_seconds(got);
        if (strcmp(got, snaps[i]) != 0 && bad++ < 2)
            CHECK(0, "step %d: replay differs\n--- live\n%.1500s\n--- replay\n%.1500s", i, snaps[i], got);
        free(got);
    }
    CHECK(bad == 0, "%d steps differ", bad);
    for (int i = 0; i < STEPS2; i++) {
        char *got = replayed(&r, true, times2[i] + 0.1);
        mask_seconds(got);
        CHECK(strcmp(got, snaps2[i]) == 0, "after the exec, step %d: replay differs\n--- live\n%.1500s\n--- replay\n%.1500s",
              i, snaps2[i], got);
        free(got);
        free(snaps2[i]);
    }
    heap_books_free(b2);
    stack_table_free(st2);

    /* --diff: the difference of two live reports' heap figures */
    {
        char *buf = NULL;
        size_t blen = 0;
        FILE *f = open_memstream(&buf, &blen);
        int a = STEPS / 2, z = STEPS - 10;
        struct replay_options o = { .report = { REPORT_JSON, REPORT_SORT_BYTES, 0 }, .diff = true,
                                    .from = times[a], .to = times[z] };
        CHECK(replay_report(f, &r, &o) == 0);
        fclose(f);
        static const char *const keys[] = { "in_use_bytes", "in_use_blocks", "allocs", "frees",
                                             "bytes_allocated" };
        for (int k = 0; k < 5; k++)
            CHECK(json_num(buf, keys[k]) == json_num(snaps[z], keys[k]) - json_num(snaps[a], keys[k]),
                  "diff %s: %lld, want %lld", keys[k], json_num(buf, keys[k]),
                  json_num(snaps[z], keys[k]) - json_num(snaps[a], keys[k]));
        free(buf);
    }
    recording_free(&r);

    /* every cut of the file: refused with a reason, or (at a record
     * boundary) a shorter recording; never a crash (ASan run) */
    size_t refused = 0;
    for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
        struct recording c;
        why[0] = 0;
        if (recording_parse(data, cut, &c, why, sizeof(why)) < 0) {
            refused++;
            CHECK(why[0] != 0, "cut at %zu: no reason", cut);
        } else {
            recording_free(&c);
        }
    }
    CHECK(refused > 0);
    /* a flipped byte in a count */
    data[RECORD_MAGIC_LEN + 1] ^= 0x40;
    struct recording c;
    if (recording_parse(data, len, &c, why, sizeof(why)) == 0)
        recording_free(&c);
    free(data);

    /* the bound: a recorder of 4096 bytes ends instead of passing it */
    rec = recorder_open(path, 100, 4096, why, sizeof(why));
    recorder_start(rec, 1, 0, "p", "");
    for (int i = 0; i < 200; i++) {
        heap_record_alloc(b, next_addr += 0x100, 100, ids[i % NSTACKS], ALLOC_MALLOC);
        recorder_sample(rec, &src, 100.0 + i, true);
    }
    CHECK(recorder_bytes(rec) <= 4096, "%llu bytes", (unsigned long long)recorder_bytes(rec));
    CHECK(recorder_close(rec) == 0);
    data = slurp(path, &len);
    CHECK(len <= 4096 && recording_parse(data, len, &r, why, sizeof(why)) == 0, "%s", why);
    recording_free(&r);
    free(data);

    /* where the RSS went ('M'): written when it changed, read back whole */
    rec = recorder_open(path, 100, 0, why, sizeof(why));
    recorder_start(rec, 1, 0, "p", "");
    struct rss_parts mem = { .rss = 0, .mappings = 9, .pagemap = true, .memtrace = 4096 };
    for (int i = 0; i < 6; i++) {
        for (int p = 0; p < RSS_PARTS; p++)
            mem.part[p] = (uint64_t)(i / 2 + 1) * (p + 1) * 4096;  /* changes every other sample */
        mem.rss = 0;
        for (int p = 0; p < RSS_PARTS; p++)
            mem.rss += mem.part[p];
        heap_record_alloc(b, next_addr += 0x100, 100, ids[0], ALLOC_MALLOC);
        struct report_source ms = src;
        ms.memory = &mem;
        recorder_sample(rec, &ms, 200.0 + i, true);
    }
    CHECK(recorder_close(rec) == 0);
    data = slurp(path, &len);
    CHECK(recording_parse(data, len, &r, why, sizeof(why)) == 0, "%s", why);
    size_t with_rss = 0;
    for (size_t i = 0; i < r.nsamples; i++) {
        if (!r.samples[i].has_rss)
            continue;
        with_rss++;
        uint64_t sum = 0;
        for (int p = 0; p < RSS_PARTS; p++)
            sum += r.samples[i].rss[1 + p];
        CHECK(sum == r.samples[i].rss[0] && r.samples[i].rss[1 + RSS_PARTS] == 9 &&
              r.samples[i].rss[2 + RSS_PARTS] == RECORD_RSS_PAGEMAP &&
              r.samples[i].rss[3 + RSS_PARTS] == 4096, "sample %zu", i);
    }
    CHECK(r.nsamples == 6 && with_rss == 3, "%zu samples, %zu with RSS", r.nsamples, with_rss);
    recording_free(&r);
    /* every cut refused or parsed, none read past its end (ASan says) */
    for (size_t cut = RECORD_MAGIC_LEN; cut < len; cut++)
        if (recording_parse(data, cut, &r, why, sizeof(why)) == 0)
            recording_free(&r);
    free(data);
    /* crafted: an 'M' before any sample, two after one, parts that do not
     * add up, too few fields, more of memtrace's own bytes than shared
     * ones; each refused with a reason (an older writer's 10 fields and
     * a later one's 12 are read) */
    static const uint8_t hdr[] = { 'M', 'T', 'R', 'E', 'C', '1', '\r', '\n',
                                   'H', 6, 1, 100, 1, 0, 0, 0 };
    static const uint8_t smp[] = { 'S', 13, 1, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t m_ok[] = { 'M', 11, 10, 7, 1, 1, 1, 1, 1, 1, 1, 2, 0 };
    static const uint8_t m_sum[] = { 'M', 11, 10, 8, 1, 1, 1, 1, 1, 1, 1, 2, 0 };
    static const uint8_t m_few[] = { 'M', 10, 9, 7, 1, 1, 1, 1, 1, 1, 1, 2 };
    static const uint8_t m_own[] = { 'M', 12, 11, 7, 1, 1, 1, 1, 1, 1, 1, 2, 0, 1 };
    static const uint8_t m_own_over[] = { 'M', 12, 11, 7, 1, 1, 1, 1, 1, 1, 1, 2, 0, 2 };
    static const uint8_t m_later[] = { 'M', 13, 12, 7, 1, 1, 1, 1, 1, 1, 1, 2, 0, 1, 99 };
    struct { const uint8_t *parts[3]; size_t lens[3]; bool ok; } cases[] = {
        { { smp, m_ok }, { sizeof(smp), sizeof(m_ok) }, true },
        { { m_ok }, { sizeof(m_ok) }, false },
        { { smp, m_ok, m_ok }, { sizeof(smp), sizeof(m_ok), sizeof(m_ok) }, false },
        { { smp, m_sum }, { sizeof(smp), sizeof(m_sum) }, false },
        { { smp, m_few }, { sizeof(smp), sizeof(m_few) }, false },
        { { smp, m_own }, { sizeof(smp), sizeof(m_own) }, true },
        { { smp, m_own_over }, { sizeof(smp), sizeof(m_own_over) }, false },
        { { smp, m_later }, { sizeof(smp), sizeof(m_later) }, true },
    };
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        uint8_t buf[128];
        size_t n = sizeof(hdr);
        memcpy(buf, hdr, n);
        for (int k = 0; k < 3 && cases[ci].parts[k]; k++) {
            memcpy(buf + n, cases[ci].parts[k], cases[ci].lens[k]);
            n += cases[ci].lens[k];
        }
        why[0] = 0;
        int prc = recording_parse(buf, n, &r, why, sizeof(why));
        CHECK((prc == 0) == cases[ci].ok, "case %zu: %s", ci, why);
        if (prc == 0) {
            CHECK(r.nsamples == 1 && r.samples[0].has_rss && r.samples[0].rss[0] == 7, "case %zu", ci);
            recording_free(&r);
        }
    }

    for (int i = 0; i < STEPS; i++)
        free(snaps[i]);
    heap_books_free(b);
    stack_table_free(st);
    unlink(path);
    return test_end("record");
}
