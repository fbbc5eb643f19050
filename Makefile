# pmusim — one plain, non-recursive Makefile.
# make [MODE=release|debug|asan|ubsan] [all|test|unit|e2e|readme-examples|e2e-real|bench|demo|deps|deps-bench|clean|format]
# make install [PREFIX=/usr/local] [DESTDIR=] | make uninstall

MODE ?= release
MAKEFLAGS += --no-print-directory
BUILD := build/$(MODE)
CC ?= cc

PKGS := unicorn capstone libelf
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wundef -Wwrite-strings
CFLAGS_release := -O2 -g
CFLAGS_debug := -O0 -g3
CFLAGS_asan := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS_ubsan := -O1 -g -fsanitize=undefined -fno-sanitize-recover=all
# The libFuzzer harnesses' build (make fuzz, CC=clang): the library instrumented for
# coverage, ASan and UBSan; tests/fuzz/ links libFuzzer's main.
CFLAGS_fuzz := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS_asan := -fsanitize=address,undefined
LDFLAGS_ubsan := -fsanitize=undefined
LDFLAGS_fuzz := -fsanitize=address,undefined
# assert() stays on in every build: no -DNDEBUG anywhere.
CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS_$(MODE)) -I. $(PKG_CFLAGS) -MMD -MP
LDFLAGS := $(LDFLAGS_$(MODE))
# Unicorn 2.0.1 allocates and frees a GLib tree on every guest store; mimalloc
# makes that path cheapest of glibc, jemalloc and mimalloc (make bench's allocator
# rows: gzip 0.65x glibc's time, jemalloc 0.91x). The release build links it first
# so that it serves the whole process; the sanitizer builds keep theirs.
ALLOC_LIBS_release := -l:libmimalloc.so.2
ALLOC_LIBS := $(ALLOC_LIBS_$(MODE))

COMMON_SRC := $(wildcard common/*.c)
PMU_SRC := $(wildcard pmu_model/*.c)
SIM_SRC := $(wildcard sim/*.c sim/machine/*.c sim/linux/*.c)
PROF_SRC := $(wildcard profiler/*.c)
CLI_SRC := $(wildcard cli/*.c)
LIB_SRC := $(COMMON_SRC) $(PMU_SRC) $(SIM_SRC) $(PROF_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
PMUSIM := $(BUILD)/pmusim

# The version --version prints and the man pages carry: the VERSION file (no build
# date, so that the same source gives the same files).
PMUSIM_VERSION := $(shell cat VERSION)
# Man pages and bash completion, written at build time from the --help texts of
# the pmusim just built (packaging/): one text, three forms.
MAN_DIR := $(BUILD)/man
MAN_STAMP := $(MAN_DIR)/.stamp
COMPLETION := $(BUILD)/pmusim.bash-completion
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(DESTDIR)$(PREFIX)/bin
MAN1DIR := $(DESTDIR)$(PREFIX)/share/man/man1
COMPLETIONDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions

UNIT_SRC := $(wildcard tests/unit/check_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
E2E_SRC := $(wildcard tests/e2e/check_*.c)
E2E_BIN := $(E2E_SRC:tests/e2e/%.c=$(BUILD)/tests/%)
# Real Debian programs natively and under pmusim (make e2e-real): a folder of its own,
# so that make test leaves it out.
REAL_SRC := $(wildcard tests/e2e_real/check_*.c)
REAL_BIN := $(REAL_SRC:tests/e2e_real/%.c=$(BUILD)/tests/%)

# The native references (tests/ref/): ptrace_edges runs a program on the real CPU and
# counts its branch edges, ptrace_rep its REP executions; they share no code with
# pmusim (no LIB_OBJ).
REF_SRC := $(wildcard tests/ref/*.c)
REF_OBJ := $(REF_SRC:%.c=$(BUILD)/%.o)
PTRACE_EDGES := $(BUILD)/tests/ptrace_edges
PTRACE_REP := $(BUILD)/tests/ptrace_rep

# Workloads: static programs with known branch structure (see workloads/*.c, *.S).
WL_DIR := build/workloads
WL_C := $(filter-out workloads/musl_%.c,$(wildcard workloads/*.c))
WL_MUSL := $(wildcard workloads/musl_*.c)
WL_S := $(wildcard workloads/*.S)
WORKLOADS := $(WL_C:workloads/%.c=$(WL_DIR)/%) $(WL_MUSL:workloads/%.c=$(WL_DIR)/%) \
	$(WL_S:workloads/%.S=$(WL_DIR)/%)

# Debian 12 packages the project, its tests and benchmarks use (binutils: objdump and nm,
# which tests/ref/ptrace_edges reads the workloads' branches from; man-db: the test that
# renders the man pages; libxml2-utils: xmllint, which parses the SVG plots in tests;
# graphviz: dot, which report --regions --svg runs and check_regions_dot reads DOT with;
# locales: the charmaps localedef needs, for check_json_read's comma-decimal locale;
# clang and libclang-rt-14-dev: libFuzzer and the sanitizers of make fuzz).
DEPS := build-essential binutils pkg-config libunicorn-dev libcapstone-dev libelf-dev check \
	valgrind libc6-dbg musl-tools busybox-static python3 linux-perf bolt-16 autofdo llvm \
	debootstrap libmimalloc2.0 man-db libxml2-utils graphviz locales nodejs chromium \
	clang libclang-rt-14-dev
# commands that a package may provide under another name (NodeSource's nodejs
# provides npm and conflicts with Debian's): installed only when missing
DEPS_CMDS := npm

# Debian 12 packages of the programs make e2e-real runs (tests/e2e_real/check_real.c).
REAL_DEPS := python3 perl gawk bc dc xxd sqlite3 xz-utils bzip2 zstd brotli lz4 lzip \
	openssl nodejs rsync make gcc imagemagick graphviz file jq busybox-static zip unzip

# Debian 12 packages of make bench's peers and its clock (bench/run.sh): qemu-user's
# qemu-x86_64, valgrind's callgrind and GNU time. make bench runs without them (a
# missing peer's rows show "-", with a hint); make deps-bench installs them.
BENCH_DEPS := qemu-user valgrind time libjemalloc2

.PHONY: fuzz fuzz-corpus fuzz-build install uninstall all test fresh-test unit e2e readme-examples e2e-real deps-real deps-bench e2e-asan asan-unit bench mca experiments cpi-results ibs-results regions-results real-vs-sim demo deps workloads clean format syscall-names

all: $(PMUSIM) $(MAN_STAMP) $(COMPLETION) workloads

$(PMUSIM): $(CLI_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(ALLOC_LIBS) $(PKG_LIBS)

$(BUILD)/cli/main.o: VERSION
$(BUILD)/cli/main.o: CFLAGS += -DPMUSIM_VERSION='"$(PMUSIM_VERSION)"'
$(BUILD)/cli/stat_baseline.o $(BUILD)/cli/run_callgrind.o: VERSION
$(BUILD)/cli/run_callgrind.o: CFLAGS += -DPMUSIM_VERSION='"$(PMUSIM_VERSION)"'
$(BUILD)/cli/stat_baseline.o: CFLAGS += -DPMUSIM_VERSION='"$(PMUSIM_VERSION)"'

$(MAN_STAMP): $(PMUSIM) VERSION packaging/man_pages.sh packaging/help.awk
	rm -f $(MAN_DIR)/*.1
	packaging/man_pages.sh $(PMUSIM) $(MAN_DIR) $(PMUSIM_VERSION)
	@touch $@

$(COMPLETION): $(PMUSIM) packaging/completion.sh packaging/help.awk
	packaging/completion.sh $(PMUSIM) > $@.tmp
	@mv $@.tmp $@

# The binary, a man page per command and the bash completion under PREFIX
# (default /usr/local), inside DESTDIR when given (a package's staging root).
install: $(PMUSIM) $(MAN_STAMP) $(COMPLETION)
	install -d $(BINDIR) $(MAN1DIR) $(COMPLETIONDIR)
	install -m 755 $(PMUSIM) $(BINDIR)/pmusim
	install -m 644 $(MAN_DIR)/*.1 $(MAN1DIR)/
	install -m 644 $(COMPLETION) $(COMPLETIONDIR)/pmusim

# Removes what install put there: pmusim's man pages are pmusim.1 and pmusim-*.1.
uninstall:
	rm -f $(BINDIR)/pmusim $(MAN1DIR)/pmusim.1 $(MAN1DIR)/pmusim-*.1 $(COMPLETIONDIR)/pmusim

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(PTRACE_EDGES): $(BUILD)/tests/ref/ptrace_edges.o $(BUILD)/tests/ref/ptrace_common.o $(BUILD)/tests/ref/edge_report.o $(BUILD)/tests/ref/objdump_sites.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

$(PTRACE_REP): $(BUILD)/tests/ref/ptrace_rep.o $(BUILD)/tests/ref/ptrace_common.o $(BUILD)/tests/ref/objdump_sites.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/check_%: tests/unit/check_%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $^ $(LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS)

$(BUILD)/tests/check_%: tests/e2e/check_%.c tests/e2e/e2e_util.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-write-strings -Wno-discarded-qualifiers $(CHECK_CFLAGS) -o $@ $^ $(LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS)

# perf's DWARF unwinding as the thread-stack unit's reference: a module of its own
$(BUILD)/tests/check_tstack_dwarf $(BUILD)/tests/check_callgraph $(BUILD)/tests/check_callgraph_dbr \
	$(BUILD)/tests/check_resonance: tests/e2e/stack_ref.c
# valgrind lackey as the reference for single dynamic instructions (op sampling)
$(BUILD)/tests/check_lackey_ref: tests/e2e/lackey_ref.c
$(BUILD)/tests/check_dbr_replay: tests/e2e/lackey_ref.c
# op sampling against lackey, objdump, the truth and perf
$(BUILD)/tests/check_ibs: tests/e2e/lackey_ref.c tests/e2e/code_ref.c tests/e2e/ibs_read.c
$(BUILD)/tests/check_ibs_perf: tests/e2e/ibs_read.c
# recording and running pmusim for the region suites
$(BUILD)/tests/check_regions $(BUILD)/tests/check_regions_dot: tests/e2e/regions_run.c

$(BUILD)/tests/check_%: tests/e2e_real/check_%.c tests/e2e/e2e_util.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-write-strings -Wno-discarded-qualifiers $(CHECK_CFLAGS) -o $@ $^ $(LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS)

WL_UNWIND := $(addprefix $(WL_DIR)/unwind/,cpi_sort cpi_tree cpi_interp loops)

workloads: $(WORKLOADS) $(WORKLOADS:%=%.o) $(WL_DIR)/loops.relocs $(WL_DIR)/loops.g $(WL_DIR)/loops.dynpie \
	$(WL_DIR)/cpu_state.dyn $(WL_UNWIND) $(WL_DIR)/ci_hot.slower

# The CI example's second build (docs/ci.md): one more multiply in its hot loop
$(WL_DIR)/ci_hot.slower: workloads/ci_hot.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -fno-pie -fno-omit-frame-pointer -DSLOWER -static -no-pie -o $@ $<

# The same objects linked with an .eh_frame_hdr, which perf's DWARF unwinder needs
# (the usual link leaves it out: the figures of the plain binaries stay as they are)
$(WL_DIR)/unwind/%: $(WL_DIR)/%.o
	@mkdir -p $(dir $@)
	gcc -static -no-pie -Wl,--eh-frame-hdr -o $@ $<

# cpu_state dynamically linked: its first printf of a double goes through ld.so's
# lazy-binding trampoline, which saves the argument registers with FXSAVE
$(WL_DIR)/cpu_state.dyn: workloads/cpu_state.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -o $@ $<

# loops linked with its relocations kept, as llvm-bolt needs to rewrite it
$(WL_DIR)/loops.relocs: $(WL_DIR)/loops.o
	gcc -static -no-pie -Wl,--emit-relocs -o $@ $<

# loops as a dynamically linked PIE with its relocations (BOLT instrumentation of a
# dynamic program, issue #5)
$(WL_DIR)/loops.dynpie: workloads/loops.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -fPIE -pie -fno-omit-frame-pointer -Wl,--emit-relocs -o $@ $<

# loops with DWARF 4 line tables (-g does not change the code), as AutoFDO needs
# source lines and Debian's AutoFDO 0.19 reads no DWARF 5
$(WL_DIR)/loops.g: workloads/loops.c
	gcc -O2 -fno-pie -fno-omit-frame-pointer -g -gdwarf-4 -static -no-pie -o $@ $<

# Each workload keeps its object file: tests read the program's own functions from it.
.PRECIOUS: $(WL_DIR)/%.o
$(WL_DIR)/musl_%.o: workloads/musl_%.c
	@mkdir -p $(WL_DIR)
	musl-gcc -O2 -c -o $@ $<

$(WL_DIR)/pie_%.o: workloads/pie_%.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -fPIE -c -o $@ $<

# indirect calls through retpoline thunks (issue #7: the thread-stack unit's markers)
$(WL_DIR)/retpoline.o: workloads/retpoline.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -fno-pie -mindirect-branch=thunk -c -o $@ $<

$(WL_DIR)/%.o: workloads/%.c
	@mkdir -p $(WL_DIR)
	gcc -O2 -fno-pie -fno-omit-frame-pointer -c -o $@ $<

$(WL_DIR)/%.o: workloads/%.S
	@mkdir -p $(WL_DIR)
	gcc -c -o $@ $<

$(WL_DIR)/%: $(WL_DIR)/%.o
	case "$*" in asm_*|ibs_ops) gcc -static -nostdlib -o $@ $< ;; \
	callstacks|sigstacks|recursion|threads|signals|getpc) gcc -static -no-pie -Wl,--eh-frame-hdr -o $@ $< ;; \
	musl_*) musl-gcc -static -o $@ $< ;; \
	pie_*) gcc -static-pie -o $@ $< ;; \
	*) gcc -static -no-pie -o $@ $< ;; esac

# The README's first command: install what is missing, build, run the default workload
# with ground truth, the PMU counters and an LBR recording that real perf reads.
demo: deps
	$(MAKE) all
	$(PMUSIM) run --truth build/demo.fdata --truth-json build/demo.json -- $(WL_DIR)/loops
	@echo "--- exact ground truth written to build/demo.fdata (BOLT fdata) and build/demo.json"
	@grep -m1 '"instructions"' build/demo.json
	@echo "--- hottest edges (from, to, mispredicts, count):"
	@sort -k8,8nr build/demo.fdata | head -6
	@echo "--- exact counts of the modelled PMU events (pmusim stat):"
	$(PMUSIM) stat -e instructions,cycles,branches,branch-misses,br_inst_retired.near_taken -- $(WL_DIR)/loops >/dev/null
	@echo "--- sampling every 10007th taken branch with a 32-deep LBR into build/demo.perf.data:"
	$(PMUSIM) record -e br_inst_retired.near_taken -c 10007 -b -o build/demo.perf.data -- $(WL_DIR)/loops >/dev/null
	@echo "--- read back by real perf (perf script -F ip,sym,brstacksym, first sample):"
	@perf script -i build/demo.perf.data -F ip,sym,brstacksym 2>/dev/null | head -1 | cut -c1-400
	@echo "--- the CBT edge profile of a denser recording against the exact truth (pmusim validate):"
	$(PMUSIM) record -e br_inst_retired.near_taken -c 97 --delta 40 -b --truth build/demo.truth.fdata -o build/demo.dense.data -- $(WL_DIR)/loops >/dev/null
	$(PMUSIM) validate -i build/demo.dense.data --truth build/demo.truth.fdata

deps:
	@missing=""; for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	for c in $(DEPS_CMDS); do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	if [ -z "$$missing" ]; then echo "deps: all installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing$$missing"; \
		echo "deps: on a fresh Debian 12 that is about 380 MB to download; apt-get's progress follows"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else echo "deps: missing:$$missing"; echo "run: sudo apt-get install -y$$missing"; exit 1; fi

deps-real:
	@missing=""; for p in $(REAL_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps-real: all installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps-real: installing$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else echo "deps-real: missing:$$missing"; echo "run: sudo apt-get install -y$$missing"; exit 1; fi

deps-bench:
	@missing=""; for p in $(BENCH_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps-bench: all installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps-bench: installing$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else echo "deps-bench: missing:$$missing"; echo "run: sudo apt-get install -y$$missing"; exit 1; fi

unit: $(UNIT_BIN)
	@tests/run_suites.sh $(UNIT_BIN)

# speedscope's app and the browser driver its test opens it with (check_speedscope),
# from the npm registry at fixed versions, outside the repository; playwright-core 1.49
# still runs on Debian 12's Node.js 18 (later ones want 20). The stamp names the
# versions, so changing them installs again.
NPM_DIR := build/npm
SPEEDSCOPE_PKGS := speedscope@1.25.0 playwright-core@1.49.1
empty :=
SPEEDSCOPE := $(NPM_DIR)/stamp-$(subst @,-,$(subst $(empty) $(empty),+,$(SPEEDSCOPE_PKGS)))
$(SPEEDSCOPE):
	@mkdir -p $(NPM_DIR)
	rm -rf $(NPM_DIR)/node_modules $(NPM_DIR)/stamp-*
	cd $(NPM_DIR) && npm install --no-audit --no-fund --loglevel=error --prefix . $(SPEEDSCOPE_PKGS)
	touch $@

e2e: $(PMUSIM) workloads $(E2E_BIN) $(PTRACE_EDGES) $(PTRACE_REP) $(SPEEDSCOPE)
	@PMUSIM=$(PMUSIM) PTRACE_EDGES=$(PTRACE_EDGES) PTRACE_REP=$(PTRACE_REP) WORKLOADS=$(WL_DIR) \
		tests/run_suites.sh $(E2E_BIN)

# Real Debian programs (python3, perl, gcc, node, compressors...) run by a shell
# natively and under pmusim, compared byte for byte; minutes, not part of make test.
e2e-real: deps-real $(PMUSIM) $(REAL_BIN)
	@PMUSIM=$(PMUSIM) WORKLOADS=$(WL_DIR) tests/run_suites.sh $(REAL_BIN)

# Every runnable example of README.md, typed as a newcomer types it after make demo, each
# block in a fresh directory (tests/readme_examples.sh; the convention is at the top of
# the README's "Tests"). Counted in make test's total.
readme-examples: $(PMUSIM) workloads
	@tests/run_suites.sh tests/readme_examples.sh

asan-unit:
	$(MAKE) MODE=asan unit

# The end-to-end suite against pmusim built with ASan+UBSan.
e2e-asan: $(E2E_BIN) workloads $(SPEEDSCOPE)
	$(MAKE) MODE=asan build/asan/pmusim build/asan/tests/ptrace_edges build/asan/tests/ptrace_rep
	@E2E_SANITIZED=1 PMUSIM=build/asan/pmusim PTRACE_EDGES=build/asan/tests/ptrace_edges \
		PTRACE_REP=build/asan/tests/ptrace_rep WORKLOADS=$(WL_DIR) tests/run_suites.sh $(E2E_BIN)

# All tests: unit suites and end-to-end suite with ASan+UBSan, then in the release
# build (tests/test_all.sh). Ends with the total of every suite: "total: N passed, N failed".
test: deps
	@MAKE="$(MAKE)" tests/test_all.sh

# The README's two commands in a fresh Debian 12 root (debootstrap, only git and make
# added), as a newcomer runs them: tests/fresh_test.sh. Needs root; about 33 minutes.
fresh-test: deps
	@tests/fresh_test.sh

# One table per program (bench/*.c, gzip): native, qemu-x86_64, callgrind and pmusim's
# configurations, paired round-robin; then PASS/FAIL of the speed targets (20 minutes
# at the default BENCH_RUNS=5 on a 2-core VM; BENCH_LONG=0 skips the 10 G-instruction run).
bench: $(PMUSIM) workloads
	@$(MAKE) BUILD=build/bench-glibc ALLOC_LIBS= build/bench-glibc/pmusim
	PMUSIM_GLIBC=build/bench-glibc/pmusim bench/run.sh $(PMUSIM) $(WL_DIR)

# The uniformity experiment: every workload through every method, trigger, TBT/CBT
# size, with and without the random delta; writes docs/results/uniformity.md and
# docs/results/svg/ (a few minutes on 2 cores; not part of make test).
experiments: $(PMUSIM) workloads
	bench/experiments.sh $(PMUSIM) $(WL_DIR) docs/results

# Real Skylake recording vs pmusim on the same binary (about 2 minutes).
# The CPI method against exact cycles on six workloads, with the traditional
# baseline and perf's LBR-cycles method beside it, and the error against the
# sample count: docs/results/cpi.md and docs/results/svg/cpi-*.svg (minutes;
# tests/e2e/check_cpi.c holds the bounds in make test).
cpi-results: $(PMUSIM) workloads
	bench/cpi_results.sh $(PMUSIM) $(WL_DIR) docs/results

# Op samples' edge profile (report --method ibs) beside CBT and IP sampling, each
# against the exact edges of the same run: docs/results/ibs.md (a few minutes).
ibs-results: $(PMUSIM) workloads
	bench/ibs_results.sh $(PMUSIM) $(WL_DIR) docs/results

# Hot super-regions and the rewriter per workload: the selection against the ideal,
# the estimate against the exact replay, the rewritten runs' cycles, the live
# rewriter, the rewritten runs' profiles: docs/results/regions.md (a few minutes).
regions-results: $(PMUSIM) workloads
	bench/regions_results.sh $(PMUSIM) $(WL_DIR) docs/results

real-vs-sim: $(PMUSIM)
	bench/real_vs_sim.sh $(PMUSIM) ../shared/fixtures/real-lbr > build/real-vs-sim.md
	mv build/real-vs-sim.md docs/results/real-vs-sim.md
	cat docs/results/real-vs-sim.md

# Timing model vs llvm-mca -mcpu=skylake on the workloads' hottest runs.
$(BUILD)/block_cost: bench/block_cost.c $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(PKG_LIBS)

mca: $(PMUSIM) workloads $(BUILD)/block_cost
	{ sed -n '1,/^<!-- table -->/p' docs/timing-vs-llvm-mca.md; \
	  bench/mca.sh $(PMUSIM) $(BUILD)/block_cost $(WL_DIR); } > build/mca.md
	mv build/mca.md docs/timing-vs-llvm-mca.md
	cat docs/timing-vs-llvm-mca.md

# Regenerates the system-call name table from the kernel's UAPI header.
UNISTD := /usr/include/x86_64-linux-gnu/asm/unistd_64.h
syscall-names:
	{ echo '/* Linux x86-64 system-call names by number, generated from the kernel UAPI header'; \
	  echo ' * <asm/unistd_64.h> (Debian 12 linux-libc-dev) with: make syscall-names. */'; \
	  echo '#include "sim/linux/syscall_names.h"'; echo; echo '#include <stddef.h>'; echo; \
	  echo 'static const char *const names[] = {'; \
	  awk '/^#define __NR_[a-z0-9_]+ [0-9]+$$/ {sub("__NR_", "", $$2); printf "\t[%s] = \"%s\",\n", $$3, $$2}' $(UNISTD); \
	  echo '};'; echo; \
	  echo 'const char *syscall_name(long nr)'; echo '{'; \
	  echo '	if (nr < 0 || (unsigned long)nr >= sizeof(names) / sizeof(names[0]) || !names[nr])'; \
	  echo '		return NULL;'; echo '	return names[nr];'; echo '}'; } > sim/linux/syscall_names.c

# libFuzzer harnesses (tests/fuzz/fuzz_*.c), one per reader of untrusted input, built
# with clang under build/fuzz. make fuzz runs each for FUZZ_SECONDS from its corpus
# (tests/fuzz/corpus/NAME for fuzz_NAME; new inputs go to build/fuzz/corpus/NAME, the committed
# corpus stays as it is); make fuzz-corpus runs each once over its corpus, which
# make test does (tests/fuzz/run_corpus.sh counts one check per harness).
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_DIR := build/fuzz
FUZZ_BIN := $(FUZZ_NAMES:%=$(FUZZ_DIR)/tests/%)
FUZZ_SECONDS ?= 60
# the front end's objects without its main (libFuzzer has one), for fuzz_cli
CLI_LIB_SRC := $(filter-out cli/main.c,$(CLI_SRC))

$(BUILD)/tests/fuzz_cli: tests/fuzz/fuzz_cli.c $(CLI_LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) $(PKG_LIBS)

# fuzz_fdata and fuzz_truth resolve their input in the static musl workload
fuzz-build: $(WL_DIR)/musl_hello
	@$(MAKE) MODE=fuzz CC=clang $(FUZZ_BIN)

fuzz: fuzz-build
	@for n in $(FUZZ_NAMES); do \
		c=$${n#fuzz_}; \
		mkdir -p $(FUZZ_DIR)/corpus/$$c $(FUZZ_DIR)/crashes/$$c; \
		echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/tests/$$n -max_total_time=$(FUZZ_SECONDS) -timeout=5 -rss_limit_mb=2048 -close_fd_mask=3 \
			-artifact_prefix=$(FUZZ_DIR)/crashes/$$c/ -print_final_stats=1 \
			$(FUZZ_DIR)/corpus/$$c tests/fuzz/corpus/$$c || exit 1; \
	done

fuzz-corpus: fuzz-build
	@tests/run_suites.sh tests/fuzz/run_corpus.sh

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(wildcard */*.h sim/*/*.h) $(UNIT_SRC) $(E2E_SRC) $(REAL_SRC) \
		$(REF_SRC) $(wildcard tests/ref/*.h)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(REF_OBJ:.o=.d)
