/* ga_cpu_fft_pass.h: one pass of the Stockham transform, a template that
 * ga_cpu_fft.c includes twice: once for one line (T = cplx) and once for GA_FFT_LANES
 * lines side by side (T = vcplx: the real parts of the lines in one vector, the
 * imaginary parts in another, so a batch runs in SIMD with no shuffles). Both
 * instances do the same operations in the same order, so a line has the same bits
 * whichever runs it.
 *
 * Before including, define PASS_NAME (the function's name), T (the element type) and
 * the operations on T: ADD, SUB, SCALE (by a double), ROT (-i a forward, i a inverse)
 * and MULW (T times a cplx twiddle, as cmul(a, w)). They are undefined at the end.
 *
 * The pass of level f (radix r) sees the line as s interleaved problems of length
 * L = r m (s the product of the radices before it) and does, for each p < m, q < s,
 *   y[q + s (r p + j)] = w_L^(p j) * sum_i x[q + s (p + i m)] w_r^(i j),  j < r,
 * leaving s r problems of length m for the next pass. Every read and write walks
 * memory in order (r input streams, one output stream), where the recursion it
 * replaces read a long line at the stride of the product of the radices (issue 45).
 * Butterflies [p0, p1) x [q0, q1): a chunk of the thread pool. */
GA_FFT_CLONES static void
PASS_NAME(const fft_plan *p, int f, const T *x, T *y, int64_t s, int inv, int64_t p0,
          int64_t p1, int64_t q0, int64_t q1)
{
    int64_t r = p->fact[f], m = p->n / (s * r);
    const cplx *w = p->tw + p->off[f];
    if (r == 2) {
        for (int64_t k = p0; k < p1; k++) {
            const T *x0 = x + s * k, *x1 = x + s * (k + m);
            T *y0 = y + s * 2 * k, *y1 = y0 + s;
            cplx w1 = twiddle(w, k, inv);
            int tw = k != 0; /* a loop invariant: GCC unswitches the loop on it */
            for (int64_t q = q0; q < q1; q++) {
                T a = x0[q], b = x1[q];
                y0[q] = ADD(a, b);
                y1[q] = tw ? MULW(SUB(a, b), w1) : SUB(a, b);
            }
        }
    } else if (r == 4) {
        for (int64_t k = p0; k < p1; k++) {
            const T *x0 = x + s * k, *x1 = x0 + s * m, *x2 = x1 + s * m,
                    *x3 = x2 + s * m;
            T *y0 = y + s * 4 * k, *y1 = y0 + s, *y2 = y1 + s, *y3 = y2 + s;
            cplx w1 = twiddle(w, 3 * k, inv), w2 = twiddle(w, 3 * k + 1, inv),
                 w3 = twiddle(w, 3 * k + 2, inv);
            int tw = k != 0;
            for (int64_t q = q0; q < q1; q++) {
                T t0 = x0[q], t1 = x1[q], t2 = x2[q], t3 = x3[q];
                T s02 = ADD(t0, t2), d02 = SUB(t0, t2);
                T s13 = ADD(t1, t3), d13 = ROT(SUB(t1, t3), inv);
                y0[q] = ADD(s02, s13);
                y1[q] = tw ? MULW(ADD(d02, d13), w1) : ADD(d02, d13);
                y2[q] = tw ? MULW(SUB(s02, s13), w2) : SUB(s02, s13);
                y3[q] = tw ? MULW(SUB(d02, d13), w3) : SUB(d02, d13);
            }
        }
    } else if (r == 3) {
        const double s60 = 0.86602540378443864676; /* sin(2 pi / 3) */
        for (int64_t k = p0; k < p1; k++) {
            const T *x0 = x + s * k, *x1 = x0 + s * m, *x2 = x1 + s * m;
            T *y0 = y + s * 3 * k, *y1 = y0 + s, *y2 = y1 + s;
            cplx w1 = twiddle(w, 2 * k, inv), w2 = twiddle(w, 2 * k + 1, inv);
            int tw = k != 0;
            for (int64_t q = q0; q < q1; q++) {
                T t0 = x0[q], t1 = x1[q], t2 = x2[q];
                T sm = ADD(t1, t2), d = SCALE(ROT(SUB(t1, t2), inv), s60);
                T base = SUB(t0, SCALE(sm, 0.5));
                y0[q] = ADD(t0, sm);
                y1[q] = tw ? MULW(ADD(base, d), w1) : ADD(base, d);
                y2[q] = tw ? MULW(SUB(base, d), w2) : SUB(base, d);
            }
        }
    } else if (r == 5) {
        const double c1 = 0.30901699437494742410, c2 = -0.80901699437494742410;
        const double s1 = 0.95105651629515357212, s2 = 0.58778525229247312917;
        for (int64_t k = p0; k < p1; k++) {
            const T *x0 = x + s * k, *x1 = x0 + s * m, *x2 = x1 + s * m,
                    *x3 = x2 + s * m, *x4 = x3 + s * m;
            T *y0 = y + s * 5 * k, *y1 = y0 + s, *y2 = y1 + s, *y3 = y2 + s,
              *y4 = y3 + s;
            const cplx *wk = w + 4 * k;
            cplx w1 = twiddle(wk, 0, inv), w2 = twiddle(wk, 1, inv),
                 w3 = twiddle(wk, 2, inv), w4 = twiddle(wk, 3, inv);
            int tw = k != 0;
            for (int64_t q = q0; q < q1; q++) {
                T t0 = x0[q], t1 = x1[q], t2 = x2[q], t3 = x3[q], t4 = x4[q];
                T a1 = ADD(t1, t4), b1 = SUB(t1, t4);
                T a2 = ADD(t2, t3), b2 = SUB(t2, t3);
                T e1 = ADD(t0, ADD(SCALE(a1, c1), SCALE(a2, c2)));
                T e2 = ADD(t0, ADD(SCALE(a1, c2), SCALE(a2, c1)));
                T o1 = ROT(ADD(SCALE(b1, s1), SCALE(b2, s2)), inv);
                T o2 = ROT(SUB(SCALE(b1, s2), SCALE(b2, s1)), inv);
                y0[q] = ADD(t0, ADD(a1, a2));
                y1[q] = tw ? MULW(ADD(e1, o1), w1) : ADD(e1, o1);
                y4[q] = tw ? MULW(SUB(e1, o1), w4) : SUB(e1, o1);
                y2[q] = tw ? MULW(ADD(e2, o2), w2) : ADD(e2, o2);
                y3[q] = tw ? MULW(SUB(e2, o2), w3) : SUB(e2, o2);
            }
        }
    } else {
        T t[GA_FFT_MAX_RADIX];
        const cplx *roots = w + m * (r - 1); /* w_r^j, j < r */
        for (int64_t k = p0; k < p1; k++) {
            for (int64_t q = q0; q < q1; q++) {
                for (int64_t i = 0; i < r; i++) {
                    t[i] = x[q + s * (k + i * m)];
                }
                for (int64_t j = 0; j < r; j++) {
                    T v = t[0];
                    for (int64_t i = 1; i < r; i++) {
                        v = ADD(v, MULW(t[i], twiddle(roots, (i * j) % r, inv)));
                    }
                    if (j > 0) {
                        v = MULW(v, twiddle(w, k * (r - 1) + j - 1, inv));
                    }
                    y[q + s * (r * k + j)] = v;
                }
            }
        }
    }
}

#undef PASS_NAME
#undef T
#undef ADD
#undef SUB
#undef SCALE
#undef ROT
#undef MULW
