/*
 * wh_float.h - Go's shortest float formatting (strconv.FormatFloat with
 * precision -1), written once for the two places that must print floats
 * byte for byte as Go does: toYaml / kube-inject output (wh_yaml, as go-yaml
 * v2 prints them) and the template engine (print, printf %v, toJson).
 */
#ifndef WH_FLOAT_H
#define WH_FLOAT_H

#include "wh_buf.h"

/* Append strconv.FormatFloat(f, fmt, -1, 64) to out: the fewest digits that
 * read back as f, laid out as fmt 'e' (d.ddde±dd), 'f' (ddd.ddd) or 'g'
 * ('e' for exponents below -4 or from 6 on, else 'f').  f must be finite:
 * NaN and infinities are spelled differently by each caller. */
void wh_float_format(wh_buf *out, double f, char fmt);

#endif
