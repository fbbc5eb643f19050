/* A pthreads workload: a bounded queue with a mutex and two condition
 * variables, four producers and three consumers, a barrier, thread-local
 * sums and joins. Prints the same lines on every run and every scheduler. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCERS 4
#define CONSUMERS 3
#define ITEMS 3000          /* per producer */
#define QSIZE 16

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	long items[QSIZE];
	int head, count, producers_left;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, PRODUCERS};

static pthread_barrier_t start;
static __thread long local_sum;
static long consumed_sum[CONSUMERS], consumed_count[CONSUMERS];

static long work(long x)
{
	/* a little computation per item, so threads get preempted mid-work */
	for (int i = 0; i < 20; i++)
		x = (x * 1103515245 + 12345) & 0x7fffffff;
	return x % 1000;
}

static void *producer(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < ITEMS; i++) {
		long v = work(id * ITEMS + i);
		pthread_mutex_lock(&q.lock);
		while (q.count == QSIZE)
			pthread_cond_wait(&q.not_full, &q.lock);
		q.items[(q.head + q.count) % QSIZE] = v;
		q.count++;
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.lock);
		local_sum += v;
	}
	pthread_mutex_lock(&q.lock);
	q.producers_left--;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	return (void *)local_sum;
}

static void *consumer(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&start);
	for (;;) {
		pthread_mutex_lock(&q.lock);
		while (q.count == 0 && q.producers_left > 0)
			pthread_cond_wait(&q.not_empty, &q.lock);
		if (q.count == 0) {
			pthread_mutex_unlock(&q.lock);
			break;
		}
		long v = q.items[q.head];
		q.head = (q.head + 1) % QSIZE;
		q.count--;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.lock);
		local_sum += v;
		consumed_count[id]++;
	}
	consumed_sum[id] = local_sum;
	return NULL;
}

int main(void)
{
	pthread_t p[PRODUCERS], c[CONSUMERS];
	pthread_barrier_init(&start, NULL, PRODUCERS + CONSUMERS);
	for (long i = 0; i < CONSUMERS; i++)
		if (pthread_create(&c[i], NULL, consumer, (void *)i))
			return 2;
	for (long i = 0; i < PRODUCERS; i++)
		if (pthread_create(&p[i], NULL, producer, (void *)i))
			return 2;
	long produced = 0, consumed = 0, n = 0;
	for (int i = 0; i < PRODUCERS; i++) {
		void *r;
		pthread_join(p[i], &r);
		produced += (long)r;
	}
	for (int i = 0; i < CONSUMERS; i++) {
		pthread_join(c[i], NULL);
		consumed += consumed_sum[i];
		n += consumed_count[i];
	}
	printf("items %ld produced %ld consumed %ld %s\n", n, produced, consumed,
	       produced == consumed && n == PRODUCERS * ITEMS ? "ok" : "MISMATCH");
	return produced == consumed ? 0 : 1;
}
