/* The inputs of the drivers, shared by the adc drivers (EVAL.c) and the
 * drivers of GradBench's hand-written `manual` tool (manual/EVAL.cpp): for
 * each eval its sizes, a function that builds the deterministic random
 * input of one size (EVAL_in_make; EVAL_in_free frees it) and the label of
 * a function at that size (EVAL_in_label: "FUNCTION[SIZE]"). Valid C99 and
 * C++. Needs bench.h (the random generator and allocation). */
#ifndef AB_INPUTS_H
#define AB_INPUTS_H

#include "bench.h"

/* gmm: d dimensions, k components, n points; m = 0, gamma = 1. */
static const int gmm_sizes[][3] = {
    {10, 25, 1000},
    {20, 50, 1000},
    /* (Larger ones make single calls slow and the tape big: d=64, k=200
     * takes about 12 s and a 6.6 GB tape with adc-9204b47.) */
    {64, 5, 1000},
};
typedef struct {
    int d, k, n, tri;
    double *alpha, *mu, *q, *l, *x;
} gmm_in;
static inline void gmm_in_make(gmm_in *in, int d, int k, int n) {
    rng_seed(1000003u * (uint64_t)d + 1009u * (uint64_t)k + (uint64_t)n);
    in->d = d; in->k = k; in->n = n;
    in->tri = d * (d - 1) / 2;
    in->alpha = drandn(k, 1.0);
    in->mu = drange((size_t)k * d, 0.0, 1.0);
    in->q = drandn((size_t)k * d, 0.1);
    in->l = drandn((size_t)k * in->tri, 0.1);
    in->x = drandn((size_t)n * d, 1.0);
}
static inline void gmm_in_free(gmm_in *in) { free(in->alpha); free(in->mu); free(in->q); free(in->l); free(in->x); }
static inline void gmm_in_label(char *s, size_t size, const char *fn, const gmm_in *in) {
    snprintf(s, size, "%s[d=%d,k=%d,n=%d]", fn, in->d, in->k, in->n);
}

/* kmeans: k centroids, n points, d dimensions. Centroids are the first k
 * points, so that every centroid has a point and dir's Hessian diagonal is
 * not zero. */
static const int kmeans_sizes[][3] = {{100, 1000, 8}, {100, 1000, 32}};
typedef struct {
    int k, n, d;
    double *p, *c;
} kmeans_in;
static inline void kmeans_in_make(kmeans_in *in, int k, int n, int d) {
    rng_seed(7u * (uint64_t)k + 1000003u * (uint64_t)n + (uint64_t)d);
    in->k = k; in->n = n; in->d = d;
    in->p = drange((size_t)n * d, 0.0, 1.0);
    in->c = dalloc((size_t)k * d);
    memcpy(in->c, in->p, sizeof(double) * (size_t)k * d);
}
static inline void kmeans_in_free(kmeans_in *in) { free(in->p); free(in->c); }
static inline void kmeans_in_label(char *s, size_t size, const char *fn, const kmeans_in *in) {
    snprintf(s, size, "%s[k=%d,n=%d,d=%d]", fn, in->k, in->n, in->d);
}

/* ode: n equations, s steps. (At n = 1000 the last element, and so the
 * gradient, underflows to 0.) */
static const int ode_sizes[][2] = {{10, 1000}, {100, 1000}, {1000, 1000}};
typedef struct {
    int n, s;
    double *x;
} ode_in;
static inline void ode_in_make(ode_in *in, int n, int s) {
    rng_seed(31u * (uint64_t)n + (uint64_t)s);
    in->n = n; in->s = s;
    in->x = drange(n, 0.0, 1.0);
}
static inline void ode_in_free(ode_in *in) { free(in->x); }
static inline void ode_in_label(char *s, size_t size, const char *fn, const ode_in *in) {
    snprintf(s, size, "%s[n=%d,s=%d]", fn, in->n, in->s);
}

/* lse: n elements. */
static const int lse_sizes[] = {1000, 1000000};
typedef struct {
    int n;
    double *x;
} lse_in;
static inline void lse_in_make(lse_in *in, int n) {
    rng_seed(17u + (uint64_t)n);
    in->n = n;
    in->x = drandn(n, 3.0);
}
static inline void lse_in_free(lse_in *in) { free(in->x); }
static inline void lse_in_label(char *s, size_t size, const char *fn, const lse_in *in) {
    snprintf(s, size, "%s[n=%d]", fn, in->n);
}

/* llsq: m = len(x) coefficients, n points. */
static const int llsq_sizes[][2] = {{16, 1024}, {256, 4096}};
typedef struct {
    int m, n;
    double *x;
} llsq_in;
static inline void llsq_in_make(llsq_in *in, int m, int n) {
    rng_seed(101u * (uint64_t)m + (uint64_t)n);
    in->m = m; in->n = n;
    in->x = drandn(m, 1.0);
}
static inline void llsq_in_free(llsq_in *in) { free(in->x); }
static inline void llsq_in_label(char *s, size_t size, const char *fn, const llsq_in *in) {
    snprintf(s, size, "%s[m=%d,n=%d]", fn, in->m, in->n);
}

/* det: an ell x ell matrix, row-major. */
static const int det_sizes[] = {7, 9};
typedef struct {
    int ell;
    double *a;
} det_in;
static inline void det_in_make(det_in *in, int ell) {
    rng_seed(4242u + (uint64_t)ell);
    in->ell = ell;
    in->a = drange((size_t)ell * ell, -1.0, 1.0);
}
static inline void det_in_free(det_in *in) { free(in->a); }
static inline void det_in_label(char *s, size_t size, const char *fn, const det_in *in) {
    snprintf(s, size, "%s[ell=%d]", fn, in->ell);
}

/* ba: n cameras, m points, p observations, with random but valid cameras
 * (small rotations, centers 10 behind the points, so depths stay
 * positive). */
static const int ba_sizes[][3] = {{21, 11315, 36455}};   /* the sizes of GradBench's ba1 */
typedef struct {
    int n, m, p;
    double *cams, *x, *w, *feats;
    int64_t *obs;
} ba_in;
static inline void ba_in_make(ba_in *in, int n, int m, int p) {
    rng_seed(13u * (uint64_t)n + 101u * (uint64_t)m + (uint64_t)p);
    in->n = n; in->m = m; in->p = p;
    double *cams = in->cams = dalloc(11 * (size_t)n);
    in->x = drange(3 * (size_t)m, -1.0, 1.0);
    for (int c = 0; c < n; c++) {
        double *cam = cams + 11 * c;
        for (int i = 0; i < 3; i++) cam[i] = 0.1 * rng_normal();       /* rotation */
        cam[3] = 0.5 * rng_normal();                                   /* center */
        cam[4] = 0.5 * rng_normal();
        cam[5] = -10.0 + 0.5 * rng_normal();
        cam[6] = rng_range(400.0, 600.0);                              /* focal */
        cam[7] = rng_range(-5.0, 5.0);                                 /* principal point */
        cam[8] = rng_range(-5.0, 5.0);
        cam[9] = 1e-3 * rng_normal();                                  /* distortion */
        cam[10] = 1e-4 * rng_normal();
    }
    in->w = drange(p, 0.5, 1.5);
    in->feats = drange(2 * (size_t)p, -50.0, 50.0);
    int64_t *obs = in->obs = ialloc(2 * (size_t)p);
    for (int i = 0; i < p; i++) {
        obs[2 * i] = rng_int(n);
        obs[2 * i + 1] = i < m ? i : rng_int(m);   /* every point observed */
    }
}
static inline void ba_in_free(ba_in *in) { free(in->cams); free(in->x); free(in->w); free(in->feats); free(in->obs); }
static inline void ba_in_label(char *s, size_t size, const char *fn, const ba_in *in) {
    snprintf(s, size, "%s[n=%d,m=%d,p=%d]", fn, in->n, in->m, in->p);
}

/* ht: a synthetic hand shaped like GradBench's: 22 bones (root, palm, 5
 * fingers of 4 bones; theta moves the first three of each finger), 544
 * vertices skinned to one or two bones, 1084 triangles; rigid base
 * transforms and their true inverses (4x4, row-major). Simple variant:
 * points correspond to vertices; complicated (mirrored, with us): to points
 * of triangles. */
#define HT_NB 22
#define HT_NV 544
#define HT_NT 1084
static const int ht_sizes[][2] = {{0, 1600}, {1, 1600}};   /* complicated, points */
typedef struct {
    int complicated, npts;
    int64_t parents[HT_NB];
    double rel[16 * HT_NB], absm[16 * HT_NB], inv[16 * HT_NB];
    double *pos, *weights;   /* pos[4*v + i], weights[HT_NB*v + b] */
    int64_t *tris;
    double theta[26];
    int64_t *corr;
    double *points, *us;     /* us: 2*npts, or none (simple) */
} ht_in;

/* c = a b, 4x4 row-major */
static inline void ht_mul4(const double *a, const double *b, double *c) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += a[4 * i + k] * b[4 * k + j];
            c[4 * i + j] = s;
        }
}

/* A rigid transform: rotation Rz(c) Ry(b) Rx(a), then translation t. */
static inline void ht_rigid(double a, double b, double c, double t0, double t1, double t2, double *m) {
    double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    double r[9] = {cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa,
                   sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa,
                   -sb,     cb * sa,                cb * ca};
    double t[3] = {t0, t1, t2};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) m[4 * i + j] = r[3 * i + j];
        m[4 * i + 3] = t[i];
    }
    m[12] = m[13] = m[14] = 0.0;
    m[15] = 1.0;
}

/* The inverse of a rigid transform. */
static inline void ht_rigid_inverse(const double *m, double *o) {
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) o[4 * i + j] = m[4 * j + i];
        o[4 * i + 3] = -(m[i] * m[3] + m[4 + i] * m[7] + m[8 + i] * m[11]);
    }
    o[12] = o[13] = o[14] = 0.0;
    o[15] = 1.0;
}

static inline void ht_in_make(ht_in *in, int complicated, int npts) {
    rng_seed(99991u * (uint64_t)complicated + (uint64_t)npts);
    in->complicated = complicated;
    in->npts = npts;
    int64_t *parents = in->parents;
    double *rel = in->rel, *absm = in->absm, *inv = in->inv;
    for (int b = 0; b < HT_NB; b++) {
        int f = (b - 2) / 4, j = (b - 2) % 4;
        double t0 = 0.0, t1 = 0.0;
        if (b == 0) parents[b] = -1;
        else if (b == 1) { parents[b] = 0; t1 = 0.3; }
        else if (j == 0) { parents[b] = 1; t0 = -0.4 + 0.2 * f; t1 = 0.8; }
        else { parents[b] = b - 1; t1 = 0.3 - 0.05 * j; }
        /* (The angles are drawn last first, as GCC evaluated them as the
         * arguments of one call: C and C++ leave that order open, so the
         * random draws are sequenced explicitly here and below.) */
        double rc = 0.2 * rng_normal();
        double rb = 0.2 * rng_normal();
        double ra = 0.2 * rng_normal();
        ht_rigid(ra, rb, rc, t0, t1, 0.0, rel + 16 * b);
        if (parents[b] < 0) memcpy(absm, rel, sizeof(double) * 16);
        else ht_mul4(absm + 16 * parents[b], rel + 16 * b, absm + 16 * b);
        ht_rigid_inverse(absm + 16 * b, inv + 16 * b);
    }
    double *pos = in->pos = dalloc(4 * HT_NV), *weights = in->weights = dalloc((size_t)HT_NB * HT_NV);
    for (int v = 0; v < HT_NV; v++) {
        int b = (int)rng_int(HT_NB);
        double local[4];
        local[0] = rng_range(-0.1, 0.1);
        local[1] = rng_range(0.0, 0.3);
        local[2] = rng_range(-0.1, 0.1);
        local[3] = 1.0;
        for (int i = 0; i < 4; i++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += absm[16 * b + 4 * i + k] * local[k];
            pos[4 * v + i] = s;
        }
        double w = rng_range(0.6, 1.0);
        if (parents[b] >= 0) {
            weights[HT_NB * v + b] = w;
            weights[HT_NB * v + parents[b]] = 1.0 - w;
        } else {
            weights[HT_NB * v + b] = 1.0;
        }
    }
    int64_t *tris = in->tris = ialloc(3 * HT_NT);
    for (int t = 0; t < HT_NT; t++) {
        int64_t a = rng_int(HT_NV), b, c;
        do b = rng_int(HT_NV); while (b == a);
        do c = rng_int(HT_NV); while (c == a || c == b);
        tris[3 * t] = a; tris[3 * t + 1] = b; tris[3 * t + 2] = c;
    }
    for (int i = 0; i < 26; i++) in->theta[i] = 0.3 * rng_normal();
    for (int i = 3; i < 6; i++) in->theta[i] = rng_normal();
    int64_t *corr = in->corr = ialloc(npts);
    double *points = in->points = dalloc(3 * (size_t)npts);
    double *us = in->us = dalloc(complicated ? 2 * (size_t)npts : 0);
    for (int i = 0; i < npts; i++) {
        corr[i] = rng_int(complicated ? HT_NT : HT_NV);
        int64_t v = complicated ? tris[3 * corr[i]] : corr[i];
        for (int k = 0; k < 3; k++) points[3 * i + k] = pos[4 * v + k] + 0.05 * rng_normal();
        if (complicated) {
            double u0 = rng_unif(), u1 = rng_unif();
            if (u0 + u1 > 1.0) { u0 = 1.0 - u0; u1 = 1.0 - u1; }
            us[2 * i] = u0;
            us[2 * i + 1] = u1;
        }
    }
}
static inline void ht_in_free(ht_in *in) {
    free(in->pos); free(in->weights); free(in->tris); free(in->corr); free(in->points); free(in->us);
}
static inline void ht_in_label(char *s, size_t size, const char *fn, const ht_in *in) {
    snprintf(s, size, "%s[%s,c=%d]", fn, in->complicated ? "complicated" : "simple", in->npts);
}

/* lstm: l layers, c characters, hidden size b. Layouts as GradBench's:
 * main = per layer 4 gate weights then 4 gate biases, b each; extra =
 * input weight, output weight, output bias; state = per layer hidden then
 * cell; sequence = c characters of b. */
static const int lstm_sizes[][3] = {{2, 1024, 14}, {4, 4096, 14}};
typedef struct {
    int l, c, b;
    int64_t nm, ne, ns, nq;   /* the lengths of main, extra, state, sequence */
    double *main, *extra, *state, *seq;
} lstm_in;
static inline void lstm_in_make(lstm_in *in, int l, int c, int b) {
    rng_seed(5u * (uint64_t)l + 977u * (uint64_t)c + (uint64_t)b);
    in->l = l; in->c = c; in->b = b;
    in->nm = 8LL * b * l; in->ne = 3LL * b; in->ns = 2LL * l * b; in->nq = (int64_t)c * b;
    in->main = drandn(in->nm, 0.5);
    in->extra = drandn(in->ne, 0.5);
    in->state = drandn(in->ns, 0.5);
    in->seq = drange(in->nq, 0.0, 1.0);
}
static inline void lstm_in_free(lstm_in *in) { free(in->main); free(in->extra); free(in->state); free(in->seq); }
static inline void lstm_in_label(char *s, size_t size, const char *fn, const lstm_in *in) {
    snprintf(s, size, "%s[l=%d,c=%d,b=%d]", fn, in->l, in->c, in->b);
}

#define AB_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
