/* Benchmark: 4 threads, each an integer compute loop (xorshift and a multiply
 * hash) that every 4096 iterations takes a shared mutex to fold its partial
 * result into a shared sum, ~200 million instructions in all. The sum is
 * commutative, so the printed checksum does not depend on the interleaving. */
#include <pthread.h>
#include <stdio.h>

enum { THREADS = 4, ITERS = 2600000, HANDOFF = 4096 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;
static unsigned long handoffs;

static void *worker(void *arg)
{
	unsigned long x = 88172645463325252UL + (unsigned long)arg, part = 0;
	for (unsigned long i = 1; i <= ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		part += (x & 1) ? x >> 3 : x * 0x9e3779b97f4a7c15UL;
		if (i % HANDOFF == 0) {
			pthread_mutex_lock(&lock);
			total += part;
			handoffs++;
			pthread_mutex_unlock(&lock);
			part = 0;
		}
	}
	pthread_mutex_lock(&lock);
	total += part;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (unsigned long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "hot_threads: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%lu %lu\n", total, handoffs);
	return 0;
}
