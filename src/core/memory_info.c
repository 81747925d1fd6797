/* What the machine has and how bytes are shown: for memory estimates that
 * are refused with a message a user can act on. */
#include <stdio.h>

#include "solvent/core.h"

size_t sv_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

const char *sv_format_bytes(size_t bytes, char *buf, size_t len)
{
    if (bytes >= (size_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= (size_t)1 << 20)
        snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
    else
        snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
    return buf;
}
