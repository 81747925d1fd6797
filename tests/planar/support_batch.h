/* The Momentum dataset's board (tests/em/data/momentum/dataset_sweep.py's
 * stack-up) with circuit `sim`'s map, swept at nf points over 0.05–10 GHz;
 * raw edge ports (calibration "none") or the default calibrated ones. */
#ifndef SV_TEST_SUPPORT_BATCH_H
#define SV_TEST_SUPPORT_BATCH_H

#include <stdio.h>
#include <string.h>

#include "solvent/em.h"
#include "sv_test.h"

static inline sv_em_project *batch_test_board(int sim, int nf, int raw_ports)
{
    const char *cal = raw_ports ? ", \"calibration\": \"none\"" : "";
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
             " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
             " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": 35, \"ny\": 11},"
             " \"pixels\": {\"csv\": \"%s/tests/em/data/momentum/pixelmaps/sim%d.csv\"},"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]%s},"
             "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72]%s}],"
             " \"sweep\": {\"start\": 0.05e9, \"stop\": 10e9, \"points\": %d}}",
             SV_SOURCE_DIR, sim, cal, cal, nf);
    sv_em_project *p = NULL;
    sv_status s = sv_em_project_parse(NULL, json, strlen(json), "board", &p);
    if (s) fprintf(stderr, "board: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    return p;
}

#endif
