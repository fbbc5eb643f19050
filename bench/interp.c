/* Benchmark: a bytecode interpreter. A small stack machine with a switch
 * dispatch loop (one indirect jump per bytecode) runs a fixed program: two
 * nested loops that fold i * j + (i ^ j) into a checksum, ~600 million
 * instructions. Prints the checksum. */
#include <stdio.h>

enum op { PUSH, LOAD, STORE, ADD, SUB, MUL, XOR, AND, DUP, JNZ, JMP, PRINT, HALT };

/* The program (locals: 0 i, 1 j, 2 sum):
 *	i = OUTER; do { j = INNER; do { sum = (sum * 31 + i * j + (i ^ j)) & MASK;
 *	} while (--j); } while (--i); print sum */
#define OUTER 2200
#define INNER 1000
#define MASK 0xffffffff
static long code[] = {
	PUSH, OUTER, STORE, 0,
	/* 4: outer loop */
	PUSH, INNER, STORE, 1,
	/* 8: inner loop */
	LOAD, 2, PUSH, 31, MUL,
	LOAD, 0, LOAD, 1, MUL, ADD,
	LOAD, 0, LOAD, 1, XOR, ADD,
	PUSH, MASK, AND, STORE, 2,
	LOAD, 1, PUSH, 1, SUB, DUP, STORE, 1, JNZ, 8,
	LOAD, 0, PUSH, 1, SUB, DUP, STORE, 0, JNZ, 4,
	LOAD, 2, PRINT, HALT,
};

static long run(const long *pc)
{
	long stack[64], locals[8] = { 0 }, *sp = stack, a, printed = 0;
	for (;;) {
		switch ((enum op)*pc++) {
		case PUSH: *sp++ = *pc++; break;
		case LOAD: *sp++ = locals[*pc++]; break;
		case STORE: locals[*pc++] = *--sp; break;
		case ADD: a = *--sp; sp[-1] += a; break;
		case SUB: a = *--sp; sp[-1] -= a; break;
		case MUL: a = *--sp; sp[-1] *= a; break;
		case XOR: a = *--sp; sp[-1] ^= a; break;
		case AND: a = *--sp; sp[-1] &= a; break;
		case DUP: sp[0] = sp[-1]; sp++; break;
		case JNZ: a = *pc++; if (*--sp) pc = code + a; break;
		case JMP: pc = code + *pc; break;
		case PRINT: printed = *--sp; break;
		case HALT: return printed;
		}
	}
}

int main(void)
{
	printf("%ld\n", run(code));
	return 0;
}
