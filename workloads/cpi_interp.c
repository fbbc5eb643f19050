/* cpi_interp: a bytecode interpreter (a small stack machine, dispatched by a
 * switch that gcc -O2 compiles to a jump table) running a program that sums
 * a polynomial over a range with a data-dependent branch: indirect jumps,
 * memory-resident operand stack, divisions. FACTS: prints "result=<n>"
 * (deterministic); exit 0. An optional argument N runs the bytecode loop N
 * times (default 20000). */
#include <stdio.h>
#include <stdlib.h>

enum op { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, DUP, JNZ, JMP, HALT };

struct insn {
	enum op op;
	long arg;
};

/* vars: 0 = i (counts down), 1 = acc */
static const struct insn prog[] = {
	/* 0 */ {LOAD, 0}, {JNZ, 3}, {HALT, 0},
	/* 3 */ {LOAD, 0}, {DUP, 0}, {MUL, 0}, {LOAD, 0}, {PUSH, 7}, {MUL, 0}, {ADD, 0},
	/* 10 */ {PUSH, 97}, {MOD, 0}, {LOAD, 1}, {ADD, 0}, {STORE, 1},
	/* 15 */ {LOAD, 0}, {PUSH, 1}, {SUB, 0}, {STORE, 0}, {JMP, 0},
};

__attribute__((noinline)) static long run(long n)
{
	long vars[2] = {n, 0}, stack[16];
	int sp = 0;
	for (long pc = 0;;) {
		const struct insn *in = &prog[pc++];
		switch (in->op) {
		case PUSH: stack[sp++] = in->arg; break;
		case LOAD: stack[sp++] = vars[in->arg]; break;
		case STORE: vars[in->arg] = stack[--sp]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
		case DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case JNZ: if (stack[--sp]) pc = in->arg; break;
		case JMP: pc = in->arg; break;
		case HALT: return vars[1];
		}
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	printf("result=%ld\n", run(n));
	return 0;
}
