/* Text from files and command lines made safe to show in a message: a key
 * or a file name with ESC sequences, newlines or invalid UTF-8 must not
 * reach the terminal raw (it could move the cursor, recolour it or forge
 * extra lines). Printable ASCII and well-formed UTF-8 pass; control
 * characters (C0, DEL, C1), the bidirectional overrides that reorder a
 * line as displayed, and bytes that are not UTF-8 become escapes. The
 * result is made only of what passes, so escaping it again changes
 * nothing. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "solvent/core.h"

/* Length of the well-formed UTF-8 sequence at s (2–4), its code point in
 * *cp; 0 when the bytes are not one (overlong, surrogate, > U+10FFFF). */
static int utf8_sequence(const unsigned char *s, uint32_t *cp)
{
    int len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!len || s[0] > 0xF4) return 0;
    uint32_t c = s[0] & (0x7F >> len);
    for (int k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[k] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}

/* Code points shown as escapes although well-formed: C1 controls and the
 * bidirectional embeddings, overrides and isolates. */
static int hidden_code_point(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

/* The escape for the byte or code point (at most 10 characters). */
static void escape_of(const unsigned char *s, int len, uint32_t cp, char out[12])
{
    static const char hex[] = "0123456789abcdef";
    if (len > 1) {
        snprintf(out, 12, "\\u%04x", (unsigned)cp);
        return;
    }
    const char *named = s[0] == '\n' ? "\\n" : s[0] == '\t' ? "\\t" : s[0] == '\r' ? "\\r" : NULL;
    if (named) {
        strcpy(out, named);
        return;
    }
    out[0] = '\\', out[1] = 'x', out[2] = hex[s[0] >> 4], out[3] = hex[s[0] & 15], out[4] = 0;
}

const char *sv_escape_text(const char *text, char *buf, size_t cap)
{
    if (!buf || cap == 0) return buf;
    buf[0] = 0;
    if (!text) return buf;
    const unsigned char *s = (const unsigned char *)text;
    size_t used = 0, cut = 0; /* cut: the last piece boundary with room for "..." after it */
    while (*s) {
        char piece[12];
        int len = 1;
        uint32_t cp = 0;
        if (*s >= 0x20 && *s < 0x7F) {
            piece[0] = (char)*s, piece[1] = 0;
        } else if (*s >= 0x80 && (len = utf8_sequence(s, &cp)) > 0 && !hidden_code_point(cp)) {
            memcpy(piece, s, (size_t)len), piece[len] = 0;
        } else {
            if (len == 0) len = 1; /* a byte that starts no sequence */
            escape_of(s, len, cp, piece);
        }
        size_t n = strlen(piece);
        if (used + 4 <= cap) cut = used;
        if (used + n + 1 > cap) {
            if (cap >= 4) memcpy(buf + cut, "...", 4);
            else buf[0] = 0;
            return buf;
        }
        memcpy(buf + used, piece, n + 1);
        used += n;
        s += len;
    }
    return buf;
}
