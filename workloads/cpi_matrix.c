/* cpi_matrix: floating-point kernels — a dense matrix product (SIMD-class
 * multiply-adds over loads), a dot product and a scaling pass with a
 * division — next to integer bookkeeping. FACTS: prints "trace=<x>"
 * (deterministic, rounded to an integer); exit 0. An optional argument N
 * repeats the kernels N times (default 4). */
#include <stdio.h>
#include <stdlib.h>

#define DIM 48

static double A[DIM][DIM], B[DIM][DIM], C[DIM][DIM];

__attribute__((noinline)) static void matmul(void)
{
	for (int i = 0; i < DIM; i++)
		for (int j = 0; j < DIM; j++) {
			double s = 0;
			for (int k = 0; k < DIM; k++)
				s += A[i][k] * B[k][j];
			C[i][j] = s;
		}
}

__attribute__((noinline)) static double dot(const double *x, const double *y, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * y[i];
	return s;
}

__attribute__((noinline)) static void scale(double *x, int n, double by)
{
	for (int i = 0; i < n; i++)
		x[i] = x[i] / by + 1.0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	for (int i = 0; i < DIM; i++)
		for (int j = 0; j < DIM; j++) {
			A[i][j] = (i * 7 + j * 3) % 11 * 0.25;
			B[i][j] = (i + 2 * j) % 5 * 0.5;
		}
	double t = 0;
	for (long r = 0; r < rounds; r++) {
		matmul();
		for (int i = 0; i < DIM; i++) {
			t += dot(C[i], A[i], DIM);
			scale(B[i], DIM, 1.0 + (double)(i % 3));
		}
	}
	printf("trace=%.0f\n", t);
	return 0;
}
