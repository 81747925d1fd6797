/* Pixel maps from CSV files: a matrix of 0/1 (1 = metal), comma-separated,
 * one grid row per line, the first line the top row (the layout of the
 * pixelated-circuit datasets, docs/project-files.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"

/* Read the whole file (≤ 64 MiB: a pixel map, not a data set). */
static sv_status slurp(const char *path, const char *field, char **out, size_t *len)
{
    char label[1024];
    snprintf(label, sizeof label, "%s = \"%s\"", field, path);
    return sv_input_file_read(path, label, (size_t)64 << 20, "a pixel map", out, len);
}

/* The byte at line[q] as shown in a message: itself when printable ASCII,
 * else an escape ('\x00', '\xef'): a NUL must not end the message early. */
static const char *shown_byte(const char *line, size_t q, size_t len, char out[8])
{
    if (q >= len) return "(nothing)";
    unsigned char c = (unsigned char)line[q];
    if (c >= 0x20 && c < 0x7f) snprintf(out, 8, "%c", c);
    else snprintf(out, 8, "\\x%02x", c);
    return out;
}

/* One line of the map into row j of `metal`; blanks around the values are
 * allowed, a trailing comma is not. */
static sv_status parse_row(const char *line, size_t len, const char *path, int row, int nx, unsigned char *cells)
{
    int col = 0;
    size_t q = 0;
    char b[8];
    for (;;) {
        while (q < len && (line[q] == ' ' || line[q] == '\t')) q++;
        char c = q < len ? line[q] : 0;
        if (q >= len || (c != '0' && c != '1'))
            return sv_error(SV_ERR_PARSE, "%s: row %d, column %d: '%s': expected 0 (empty) or 1 (metal)", path,
                            row + 1, col + 1, shown_byte(line, q, len, b));
        if (col >= nx)
            return sv_error(SV_ERR_PARSE, "%s: row %d has more than %d values: expected grid.nx = %d columns", path,
                            row + 1, nx, nx);
        cells[col++] = (unsigned char)(c == '1');
        q++;
        while (q < len && (line[q] == ' ' || line[q] == '\t')) q++;
        if (q >= len) break;
        if (line[q] != ',')
            return sv_error(SV_ERR_PARSE, "%s: row %d, column %d: '%s': expected ',' between values", path, row + 1,
                            col, shown_byte(line, q, len, b));
        q++;
    }
    if (col != nx)
        return sv_error(SV_ERR_PARSE, "%s: row %d has %d values: expected grid.nx = %d columns", path, row + 1, col,
                        nx);
    return SV_OK;
}

sv_status sv_em_pixels_csv_read(const char *path, const char *field, int nx, int ny, unsigned char *metal)
{
    char *text = NULL;
    size_t len = 0;
    sv_status s = slurp(path, field, &text, &len);
    if (s) return s;
    unsigned char *row_cells = malloc((size_t)nx);
    if (!row_cells) {
        free(text);
        return sv_error(SV_ERR_NOMEM, "%s = \"%s\": no memory", field, path);
    }
    int row = 0;
    size_t q = 0;
    /* the UTF-8 byte-order mark some editors (Excel) put first */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) q = 3;
    while (q < len && !s) {
        size_t e = q;
        while (e < len && text[e] != '\n') e++;
        size_t l = e - q;
        if (l && text[q + l - 1] == '\r') l--;
        int blank = 1;
        for (size_t k = 0; k < l; k++) blank &= text[q + k] == ' ' || text[q + k] == '\t';
        if (!blank) {
            if (row >= ny) {
                s = sv_error(SV_ERR_PARSE, "%s: more than %d rows: expected grid.ny = %d rows", path, ny, ny);
                break;
            }
            s = parse_row(text + q, l, path, row, nx, row_cells);
            int j = ny - 1 - row; /* first line = top row */
            if (!s) memcpy(metal + (size_t)nx * j, row_cells, (size_t)nx);
            row++;
        }
        q = e + 1;
    }
    if (!s && row != ny) s = sv_error(SV_ERR_PARSE, "%s: %d rows: expected grid.ny = %d rows", path, row, ny);
    free(row_cells);
    free(text);
    return s;
}
