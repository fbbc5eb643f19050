/* Tail probabilities of the distributions the uniformity test needs, from
 * math.h alone: the regularised incomplete gamma and beta functions, and through
 * them the chi-square and Student t tails, and the normal quantile. Plain C, no
 * state; accurate to about 1e-12 relative where the result is not subnormal. */
#ifndef PMUSIM_PROFILER_STAT_DIST_H
#define PMUSIM_PROFILER_STAT_DIST_H

/* Regularised upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a), for
 * a > 0, x >= 0 (DLMF 8.2.4); NAN outside. P(a, x) = 1 - Q(a, x). */
double gamma_q(double a, double x);
double gamma_p(double a, double x);

/* Regularised incomplete beta I_x(a, b) for a, b > 0, 0 <= x <= 1 (DLMF 8.17.2);
 * NAN outside. */
double beta_inc(double a, double b, double x);

/* P(X >= x) for X chi-square with dof > 0 degrees of freedom (dof need not be a
 * whole number): Q(dof / 2, x / 2). 1 for x <= 0. */
double chi2_sf(double x, double dof);

/* Two-sided tail P(|T| >= |t|) for T Student t with dof > 0 degrees of freedom:
 * I_{dof / (dof + t^2)}(dof / 2, 1 / 2) (DLMF 8.17.2 with the t density). 0 for
 * an infinite t. */
double t_sf2(double t, double dof);

/* The |t| whose two-sided tail t_sf2 is p (0 < p <= 1), by bisection. */
double t_quantile2(double p, double dof);

/* The z >= 0 with P(|Z| >= z) = p for Z standard normal (0 < p <= 1), i.e.
 * sqrt(2) erfc^-1(p); INFINITY for p <= 0 (below the smallest double). */
double normal_quantile2(double p);

#endif
