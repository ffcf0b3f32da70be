/* Runs exported friction code on a velocity record, for tests/test_export.py.

   driver KIND TYPE IN OUT
   IN: raw float64 values n, dt, qd[n], dt[n]; OUT: raw float64 tau[n], z[n].
   KIND: fixed, variable (dt per sample), clamp (fixed, qd clamped to the validity range),
   pair (two instances stepped alternately, the second on -qd: OUT holds the first's tau and
   the second's tau), static (the static curve). TYPE: double or float (the functions with the
   suffix f). Prints the counts of samples outside the validity range and of samples refused.
   Compile with -DPREFIX=<exported prefix> -DHEADER='"<prefix>.h"'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name, suffix) CAT(CAT(PREFIX, _##name), suffix)

#define RUN(suffix, real)                                                                      \
    do {                                                                                       \
        CAT(CAT(PREFIX, _state), suffix) a, b;                                                 \
        CAT(CAT(PREFIX, _params), suffix) p = CAT(CAT(PREFIX, _model), suffix);                \
        p.clamp = !strcmp(kind, "clamp");                                                      \
        if (FN(init, suffix)(&a, &p, (real)dt, 0) || FN(init, suffix)(&b, &p, (real)dt, 0)) {  \
            return 3;                                                                          \
        }                                                                                      \
        for (long i = 0; i < n; i++) {                                                         \
            if (!strcmp(kind, "fixed") || !strcmp(kind, "clamp")) {                            \
                tau[i] = FN(step, suffix)(&a, (real)qd[i]);                                    \
            } else if (!strcmp(kind, "variable")) {                                            \
                tau[i] = FN(step_dt, suffix)(&a, (real)qd[i], (real)h[i]);                     \
            } else if (!strcmp(kind, "pair")) {                                                \
                tau[i] = FN(step, suffix)(&a, (real)qd[i]);                                    \
                z[i] = FN(step, suffix)(&b, (real)-qd[i]);                                     \
                continue;                                                                      \
            } else {                                                                           \
                tau[i] = FN(static, suffix)(&a, (real)qd[i]);                                  \
            }                                                                                  \
            z[i] = a.z;                                                                        \
        }                                                                                      \
        printf("%lu %lu\n", a.outside, a.rejected);                                          \
    } while (0)

int main(int argc, char **argv)
{
    double head[2];
    if (argc != 5) {
        return 2;
    }
    const char *kind = argv[1];
    FILE *in = fopen(argv[3], "rb");
    if (!in || fread(head, sizeof(double), 2, in) != 2) {
        return 2;
    }
    long n = (long)head[0];
    double dt = head[1];
    double *qd = malloc(4 * n * sizeof(double));
    double *h = qd + n, *tau = qd + 2 * n, *z = qd + 3 * n;
    if (!qd || fread(qd, sizeof(double), 2 * n, in) != (size_t)(2 * n)) {
        return 2;
    }
    fclose(in);
    if (!strcmp(argv[2], "float")) {
        RUN(f, float);
    } else {
        RUN(, double);
    }
    FILE *out = fopen(argv[4], "wb");
    if (!out || fwrite(tau, sizeof(double), 2 * n, out) != (size_t)(2 * n)) {
        return 2;
    }
    fclose(out);
    free(qd);
    return 0;
}
