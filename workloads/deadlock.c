/* Two threads that each hold the lock the other wants: on Linux the program
 * hangs forever; pmusim sees every thread wait with nothing left to wake one
 * and ends the run (exit status 125). */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *other(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&b);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&a);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&t, NULL, other, NULL);
	pthread_mutex_lock(&a);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&b);
	puts("not reached");
	return 0;
}
