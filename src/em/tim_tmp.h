#include <stdio.h>
#include <stdlib.h>
#define TIM(label, stmt) do { double _t0 = sv_time_now(); stmt; if (getenv("SV_TIM")) fprintf(stderr, "tim %-28s %.4f s\n", label, sv_time_now() - _t0); } while (0)
