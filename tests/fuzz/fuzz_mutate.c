/* Mutations for the fuzz campaign (fuzz_mutate.h). The JSON-aware ones
 * parse the seed with cJSON, change one node, and print it again; raw
 * tokens cJSON cannot hold (NaN, 1e999, 0x10) go in as marker strings
 * replaced after printing. */
#include "fuzz_mutate.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t fz_next(fz_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

unsigned fz_below(fz_rng *r, unsigned n) { return (unsigned)(fz_next(r) % n); }

static void reserve(fz_buf *b, size_t len)
{
    if (len + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < len + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) abort(); /* the harness itself out of memory: nothing to test */
    b->data = d;
    b->cap = cap;
}

void fz_buf_set(fz_buf *b, const char *data, size_t len)
{
    reserve(b, len);
    memmove(b->data, data, len);
    b->len = len;
    b->data[len] = 0;
}

void fz_buf_append(fz_buf *b, const char *data, size_t len)
{
    reserve(b, b->len + len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

void fz_buf_free(fz_buf *b)
{
    free(b->data);
    *b = (fz_buf){0};
}

/* Replace [at, at + del) by ins[0..n). */
static void splice(fz_buf *b, size_t at, size_t del, const char *ins, size_t n)
{
    if (at > b->len) at = b->len;
    if (del > b->len - at) del = b->len - at;
    reserve(b, b->len - del + n);
    memmove(b->data + at + n, b->data + at + del, b->len - at - del);
    memcpy(b->data + at, ins, n);
    b->len = b->len - del + n;
    b->data[b->len] = 0;
}

/* ---- bytes ----------------------------------------------------------------- */

static const char interesting[] = {0, 1, 0x1b, '\n', '\r', '\t', 0x7f, (char)0x80, (char)0xc0, (char)0xff, '"', '\\',
                                   '{', '}', '[', ']', ',', ':', '-', '.', 'e', '0', '9', '#', '%', ' '};

const char *fz_mutate_bytes(fz_rng *r, fz_buf *b, const fz_buf *other)
{
    size_t len = b->len, at = len ? fz_below(r, (unsigned)len) : 0;
    switch (fz_below(r, 9)) {
    case 0:
        if (len) b->data[at] ^= (char)(1u << fz_below(r, 8));
        return "bit flip";
    case 1:
        if (len) b->data[at] = interesting[fz_below(r, sizeof interesting)];
        return "byte set";
    case 2: {
        char c[4];
        unsigned n = 1 + fz_below(r, 4);
        for (unsigned k = 0; k < n; k++) c[k] = interesting[fz_below(r, sizeof interesting)];
        splice(b, at, 0, c, n);
        return "bytes inserted";
    }
    case 3:
        splice(b, at, 1 + fz_below(r, 64), "", 0);
        return "span deleted";
    case 4:
        b->len = at;
        b->data[at] = 0;
        return "truncated";
    case 5: {
        size_t n = len ? 1 + fz_below(r, (unsigned)(len - at < 128 ? len - at : 128)) : 0;
        char *copy = malloc(n + 1);
        memcpy(copy, b->data + at, n);
        splice(b, fz_below(r, (unsigned)len + 1), 0, copy, n);
        free(copy);
        return "span duplicated";
    }
    case 6:
        if (other && other->len) {
            size_t from = fz_below(r, (unsigned)other->len);
            splice(b, at, len - at, other->data + from, other->len - from);
        }
        return "spliced with another seed";
    case 7: {
        size_t n = 1000 + fz_below(r, 5000);
        char *run = malloc(n);
        memset(run, interesting[fz_below(r, sizeof interesting)], n);
        splice(b, at, 0, run, n);
        free(run);
        return "long run inserted";
    }
    default: {
        /* the next number in the text: a huge, negative or odd one */
        static const char *const nums[] = {"4294967296", "-1", "0", "1e308", "5e-324", "99999999999999999999",
                                           "2147483648", "-0", "1e-300", "100000", "46341", "65536"};
        size_t s = at;
        while (s < len && !(b->data[s] >= '0' && b->data[s] <= '9')) s++;
        size_t e = s;
        while (e < len && ((b->data[e] >= '0' && b->data[e] <= '9') || b->data[e] == '.')) e++;
        const char *n = nums[fz_below(r, sizeof nums / sizeof nums[0])];
        if (s < len) splice(b, s, e - s, n, strlen(n));
        return "number replaced";
    }
    }
}

/* ---- JSON ------------------------------------------------------------------ */

/* Raw tokens no cJSON value prints as. */
static const char *const raw_tokens[] = {"NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e-999", "0x10",
                                         "01", ".5", "1e", "-", "+1", "18446744073709551616", "nan"};
#define RAW_MARKER "@@raw%02u@@"

typedef struct nodes {
    cJSON **node, **parent;
    int n, cap;
} nodes;

static void collect(cJSON *n, cJSON *parent, nodes *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->node = realloc(l->node, sizeof *l->node * (size_t)l->cap);
        l->parent = realloc(l->parent, sizeof *l->parent * (size_t)l->cap);
        if (!l->node || !l->parent) abort();
    }
    l->node[l->n] = n;
    l->parent[l->n++] = parent;
    for (cJSON *c = n->child; c; c = c->next) collect(c, n, l);
}

static cJSON *special_number(fz_rng *r)
{
    static const double v[] = {0,          -0.0,       -1,         1,          0.5,        1e-300,    5e-324,
                               1e300,      1e308,      -1e308,     2147483647, 2147483648, 4294967296, 9007199254740993.0,
                               1e15,       1e16,       46341,      65536,      100000,     100001,    1e8,
                               -1e-9,      1e-9,       3.5,        1e6,        1e7,        1e-3,      1e10};
    if (fz_below(r, 6) == 0) {
        char marker[32];
        snprintf(marker, sizeof marker, RAW_MARKER, fz_below(r, sizeof raw_tokens / sizeof raw_tokens[0]));
        return cJSON_CreateString(marker);
    }
    return cJSON_CreateNumber(v[fz_below(r, sizeof v / sizeof v[0])]);
}

static cJSON *special_string(fz_rng *r)
{
    static const char *const s[] = {"",          "inf",          "NaN",         "mm",        "\xc2\xb5m", "m",
                                    "mil",       "\x1b[2J\x1b]0;t\x07", "a\nforged", "\x7f",    "\xff\xfe",  "\xc0\xaf",
                                    "\xed\xa0\x80", "\xe2\x80\xae" "rtl", "#",       "!",         " ",         "left",
                                    "top",       "P1",           "csv",         "GHz",       "\xc2\x9b" "31m"};
    if (fz_below(r, 5) == 0) {
        size_t n = 1000 + fz_below(r, 200000);
        char *t = malloc(n + 1);
        memset(t, 'A' + (int)fz_below(r, 26), n);
        t[n] = 0;
        cJSON *c = cJSON_CreateString(t);
        free(t);
        return c;
    }
    return cJSON_CreateString(s[fz_below(r, sizeof s / sizeof s[0])]);
}

static char *copy_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    memcpy(d, s, n);
    return d;
}

/* item of parent (NULL: the root, *root) replaced by repl. */
static void replace(cJSON **root, cJSON *parent, cJSON *item, cJSON *repl)
{
    if (!repl) return;
    if (!parent) {
        cJSON_Delete(*root);
        *root = repl;
        return;
    }
    if (item->string) repl->string = copy_str(item->string);
    cJSON_ReplaceItemViaPointer(parent, item, repl);
}

static cJSON *nested(fz_rng *r, cJSON *inner)
{
    int depth = 2 + (int)fz_below(r, fz_below(r, 4) ? 50 : 3000);
    for (int k = 0; k < depth; k++) {
        cJSON *a = cJSON_CreateArray();
        cJSON_AddItemToArray(a, inner);
        inner = a;
    }
    return inner;
}

static const char *random_key(fz_rng *r)
{
    static const char *const keys[] = {"x", "y", "nx", "dx", "units", "ports", "unknown", "\x1b[31mred",
                                       "line\nbreak", "\xff", "", "tan_delta", "sweep", "origin", "z0", "name"};
    return keys[fz_below(r, sizeof keys / sizeof keys[0])];
}

/* One change to the tree; returns its name. */
static const char *mutate_tree(fz_rng *r, cJSON **root)
{
    nodes l = {0};
    collect(*root, NULL, &l);
    int k = (int)fz_below(r, (unsigned)l.n);
    cJSON *n = l.node[k], *parent = l.parent[k];
    const char *what = "";
    switch (fz_below(r, 13)) {
    case 0: replace(root, parent, n, special_number(r)), what = "number"; break;
    case 1: replace(root, parent, n, special_string(r)), what = "string"; break;
    case 2: {
        unsigned t = fz_below(r, 3);
        replace(root, parent, n, t == 0 ? cJSON_CreateNull() : cJSON_CreateBool(t == 1));
        what = "null or boolean";
        break;
    }
    case 3: {
        unsigned t = fz_below(r, 3);
        cJSON *c = t == 0 ? cJSON_CreateArray() : t == 1 ? cJSON_CreateObject() : cJSON_CreateArray();
        if (t == 2)
            for (unsigned q = fz_below(r, 6); q; q--) cJSON_AddItemToArray(c, special_number(r));
        replace(root, parent, n, c);
        what = "array or object";
        break;
    }
    case 4: {
        cJSON *copy = cJSON_Duplicate(n, 1);
        replace(root, parent, n, nested(r, copy));
        what = "deep nesting";
        break;
    }
    case 5:
        if (parent) cJSON_Delete(cJSON_DetachItemViaPointer(parent, n));
        what = "deleted";
        break;
    case 6:
        if (parent) {
            cJSON *copy = cJSON_Duplicate(n, 1);
            if (cJSON_IsObject(parent)) cJSON_AddItemToObject(parent, n->string, copy); /* a duplicate key */
            else cJSON_AddItemToArray(parent, copy);
        }
        what = "duplicated";
        break;
    case 7:
        if (cJSON_IsObject(n)) cJSON_AddItemToObject(n, random_key(r), special_number(r));
        what = "member added";
        break;
    case 8:
        if (cJSON_IsNumber(n)) {
            static const double f[] = {-1, 10, 0.1, 1e10, 1e-10, 1e300, 1e-300, 0.5, 1.0000001};
            double v = n->valuedouble * f[fz_below(r, sizeof f / sizeof f[0])];
            cJSON_SetNumberValue(n, v);
        }
        what = "number scaled";
        break;
    case 9: {
        cJSON *g = cJSON_GetObjectItemCaseSensitive(*root, "grid");
        if (cJSON_IsObject(g)) {
            static const double big[] = {100000, 46341, 65536, 10000, 20000, 1e8, 3000};
            cJSON *v = cJSON_CreateNumber(big[fz_below(r, 7)]);
            if (!cJSON_ReplaceItemInObjectCaseSensitive(g, fz_below(r, 2) ? "nx" : "ny", v))
                cJSON_Delete(v); /* a grid without that member (mutated before) */
        }
        what = "huge grid";
        break;
    }
    case 10:
        if (parent && cJSON_IsObject(parent) && n->string) {
            free(n->string);
            n->string = copy_str(random_key(r));
        }
        what = "key renamed";
        break;
    case 11:
        if (cJSON_IsArray(n) && n->child && n->child->next) {
            cJSON *first = cJSON_DetachItemFromArray(n, 0);
            cJSON_AddItemToArray(n, first);
        }
        what = "array rotated";
        break;
    default:
        if (cJSON_IsNumber(n)) {
            char t[64];
            snprintf(t, sizeof t, "%.17g", n->valuedouble);
            replace(root, parent, n, cJSON_CreateString(t));
        }
        what = "number as string";
        break;
    }
    free(l.node);
    free(l.parent);
    return what;
}

/* The printed tree with the raw-token markers replaced. */
static void print_tree(fz_rng *r, const cJSON *root, fz_buf *b)
{
    char *s = fz_below(r, 2) ? cJSON_PrintUnformatted(root) : cJSON_Print(root);
    if (!s) return;
    fz_buf_set(b, s, strlen(s));
    free(s);
    for (unsigned k = 0; k < sizeof raw_tokens / sizeof raw_tokens[0]; k++) {
        char marker[32];
        snprintf(marker, sizeof marker, "\"" RAW_MARKER "\"", k);
        for (char *at; (at = strstr(b->data, marker));)
            splice(b, (size_t)(at - b->data), strlen(marker), raw_tokens[k], strlen(raw_tokens[k]));
    }
}

const char *fz_mutate_json(fz_rng *r, fz_buf *b)
{
    cJSON *root = cJSON_ParseWithLength(b->data, b->len);
    if (!root) return fz_mutate_bytes(r, b, NULL); /* a mutated seed that is no JSON any more */
    const char *what = mutate_tree(r, &root);
    for (unsigned extra = fz_below(r, 4) == 0 ? 1 + fz_below(r, 4) : 0; extra; extra--) mutate_tree(r, &root);
    print_tree(r, root, b);
    cJSON_Delete(root);
    return what;
}

/* ---- pattern files ------------------------------------------------------- */

/* Start of line k (0-based) of b, or b->len. */
static size_t line_start(const fz_buf *b, unsigned k)
{
    size_t at = 0;
    for (; k && at < b->len; at++)
        if (b->data[at] == '\n') k--;
    return at;
}

static size_t line_end(const fz_buf *b, size_t at)
{
    while (at < b->len && b->data[at] != '\n') at++;
    return at;
}

static unsigned count_lines(const fz_buf *b)
{
    unsigned n = 0;
    for (size_t k = 0; k < b->len; k++) n += b->data[k] == '\n';
    return n + 1;
}

/* The first line that is neither the header nor a comment: the size line. */
static unsigned size_line(const fz_buf *b)
{
    unsigned k = 1;
    for (; k < count_lines(b); k++) {
        size_t s = line_start(b, k);
        if (s < b->len && b->data[s] != '%') break;
    }
    return k;
}

const char *fz_mutate_pattern(fz_rng *r, fz_buf *b)
{
    unsigned lines = count_lines(b), sl = size_line(b);
    unsigned entry = sl + 1 + (lines > sl + 2 ? fz_below(r, lines - sl - 2) : 0);
    size_t es = line_start(b, entry), ee = line_end(b, es);
    char text[2048];
    switch (fz_below(r, 10)) {
    case 0: { /* one entry line more than announced */
        size_t n = ee - es < 200 ? ee - es : 200;
        memcpy(text, b->data + es, n);
        text[n] = '\n';
        splice(b, ee + (ee < b->len), 0, text, n + 1);
        return "entry duplicated";
    }
    case 1: {
        unsigned k = 1 + fz_below(r, 20);
        for (unsigned q = 0; q < k; q++) {
            int n = snprintf(text, sizeof text, "%u %u\n", 1 + fz_below(r, 40), 1 + fz_below(r, 40));
            fz_buf_append(b, text, (size_t)n);
        }
        return "entries appended";
    }
    case 2: {
        static const char *const sizes[] = {"100000000 100000000 1", "0 0 0",        "-3 -3 2",
                                            "20 21 5",               "20 20 -1",     "20 20 500000001",
                                            "1000000 1000000 3",     "5 5 1000",     "2147483648 2147483648 1",
                                            "20 20",                 "20 20 3 4",    "1e3 1e3 4"};
        const char *s = sizes[fz_below(r, sizeof sizes / sizeof sizes[0])];
        size_t ss = line_start(b, sl);
        splice(b, ss, line_end(b, ss) - ss, s, strlen(s));
        return "size line";
    }
    case 3: {
        static const char *const bad[] = {"0 1", "1 0", "-1 2", "99999 1", "2147483648 1", "1.5 2", "1", "", "x y",
                                          "1 1 1 1 1", "3 3 nan"};
        const char *s = bad[fz_below(r, sizeof bad / sizeof bad[0])];
        splice(b, es, ee - es, s, strlen(s));
        return "entry indices";
    }
    case 4: { /* a line about the buffer's length: 1023 is still one line */
        size_t pad = 1015 + fz_below(r, 100);
        char *sp = malloc(pad);
        memset(sp, fz_below(r, 2) ? ' ' : '0', pad);
        splice(b, ee, 0, sp, pad);
        free(sp);
        return "long line";
    }
    case 5: {
        size_t end = line_end(b, line_start(b, entry + fz_below(r, 5)));
        splice(b, es, end - es + (end < b->len), "", 0);
        return "entries deleted";
    }
    case 6: {
        static const char *const heads[] = {"%%MatrixMarket matrix coordinate pattern symmetric",
                                            "%%MatrixMarket matrix coordinate real hermitian",
                                            "%%MatrixMarket matrix array real general",
                                            "%%MatrixMarket matrix coordinate complex skew-symmetric",
                                            "%%MatrixMarket vector coordinate pattern general", "%%MatrixMarket",
                                            "%%matrixmarket MATRIX Coordinate Pattern General"};
        const char *h = heads[fz_below(r, sizeof heads / sizeof heads[0])];
        splice(b, 0, line_end(b, 0), h, strlen(h));
        return "header";
    }
    case 7: {
        static const char *const ins[] = {"% a comment\n", "\n", "   \n", "%\n", "\r\n", "% \x1b[2J\n"};
        const char *s = ins[fz_below(r, sizeof ins / sizeof ins[0])];
        splice(b, es, 0, s, strlen(s));
        return "comment or blank line";
    }
    case 8: {
        /* two entry lines swapped */
        size_t n = ee - es < 200 ? ee - es : 200;
        memcpy(text, b->data + es, n);
        splice(b, es, ee - es + (ee < b->len), "", 0);
        text[n] = '\n';
        splice(b, line_start(b, sl + 1), 0, text, n + 1);
        return "entries moved";
    }
    default:
        return fz_mutate_bytes(r, b, NULL);
    }
}
