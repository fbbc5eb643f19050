/* Chi-square, Student t and normal tails (see stat_dist.h). The incomplete gamma
 * function by its power series (DLMF 8.7.1) below x = a + 1 and Legendre's
 * continued fraction (DLMF 8.9.2) above; the incomplete beta function by its
 * continued fraction (DLMF 8.17.22) on the side of x where it converges fast
 * (DLMF 8.17.4 for the other); continued fractions evaluated by the modified
 * Lentz method (Thompson and Barnett, J. Comput. Phys. 64, 1986). */
#include "profiler/stat_dist.h"

#include <float.h>
#include <math.h>

#define EPS 1e-15
#define TINY 1e-300
#define MAX_ITER 10000

/* P(a, x) by the series e^-x x^a / Gamma(a + 1) * sum x^n / ((a + 1) ... (a + n)). */
static double gamma_p_series(double a, double x)
{
	double term = 1.0 / a, sum = term;
	for (int n = 1; n < MAX_ITER; n++) {
		term *= x / (a + n);
		sum += term;
		if (fabs(term) < fabs(sum) * EPS)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) by Legendre's continued fraction
 * Gamma(a, x) = e^-x x^a / (x + 1 - a - 1(1 - a) / (x + 3 - a - 2(2 - a) / (x + 5 - a - ...))). */
static double gamma_q_fraction(double a, double x)
{
	double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;
	for (int i = 1; i < MAX_ITER; i++) {
		double an = -i * (i - a);
		b += 2;
		d = an * d + b;
		if (fabs(d) < TINY)
			d = TINY;
		c = b + an / c;
		if (fabs(c) < TINY)
			c = TINY;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

double gamma_p(double a, double x)
{
	if (!(a > 0) || !(x >= 0))
		return NAN;
	if (x == 0)
		return 0;
	if (isinf(x))
		return 1;
	return x < a + 1 ? gamma_p_series(a, x) : 1 - gamma_q_fraction(a, x);
}

double gamma_q(double a, double x)
{
	if (!(a > 0) || !(x >= 0))
		return NAN;
	if (x == 0)
		return 1;
	if (isinf(x))
		return 0;
	return x < a + 1 ? 1 - gamma_p_series(a, x) : gamma_q_fraction(a, x);
}

/* 1 + d1 / (1 + d2 / (1 + ...)) of DLMF 8.17.22, with
 * d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) and
 * d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)). */
static double beta_fraction(double a, double b, double x)
{
	double f = 1, c = 1, d = 0;
	for (int j = 1; j < MAX_ITER; j++) {
		int m = j / 2;
		double dj = j % 2 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
		                  : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + dj * d;
		if (fabs(d) < TINY)
			d = TINY;
		c = 1 + dj / c;
		if (fabs(c) < TINY)
			c = TINY;
		d = 1 / d;
		double del = c * d;
		f *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return f;
}

double beta_inc(double a, double b, double x)
{
	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	if (x > (a + 1) / (a + b + 2)) /* the fraction converges fast below this point */
		return 1 - beta_inc(b, a, 1 - x);
	double front = exp(a * log(x) + b * log1p(-x) - lgamma(a) - lgamma(b) + lgamma(a + b)) / a;
	return front / beta_fraction(a, b, x);
}

double chi2_sf(double x, double dof)
{
	return x <= 0 ? 1 : gamma_q(dof / 2, x / 2);
}

double t_sf2(double t, double dof)
{
	if (isinf(t))
		return 0;
	return beta_inc(dof / 2, 0.5, dof / (dof + t * t));
}

double t_quantile2(double p, double dof)
{
	if (p >= 1)
		return 0;
	if (!(p > 0))
		return INFINITY;
	double lo = 0, hi = 1;
	while (t_sf2(hi, dof) > p && hi < DBL_MAX / 4)
		lo = hi, hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (t_sf2(mid, dof) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double normal_quantile2(double p)
{
	if (p >= 1)
		return 0;
	if (!(p > 0))
		return INFINITY;
	double lo = 0, hi = 40; /* erfc(40 / sqrt 2) is below the smallest double */
	for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (erfc(mid / M_SQRT2) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
