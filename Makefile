# iowrap — see README.md.  `make check` on a fresh Debian 12 machine installs
# what is missing, builds the static dependencies, builds and runs every test.

CC        := musl-gcc
HOSTCC    := gcc
DEPS      := build/deps
KHEADERS  := build/kheaders
OBJDIR    := build/obj
PYTEST    := /usr/bin/python3 -m pytest

WARN      := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral
CPPFLAGS  := -D_GNU_SOURCE -Icommon -Iptrace -Icmd -Ireport -I$(DEPS)/include \
             -idirafter $(KHEADERS)
CFLAGS    := -std=c11 -O2 -g $(WARN) -fstack-protector-strong \
             -D_FORTIFY_SOURCE=2
LDFLAGS   := -static
LDLIBS    := $(DEPS)/lib/libfuse3.a $(DEPS)/lib/libcjson.a -lpthread

COMMON_SRC := $(sort $(wildcard common/*.c))
# filtergen.c and filterrules.c run at build time (ptrace/filterrules.h):
# libseccomp compiles the seccomp filter's bodies into build/gen.
FILTERGEN_SRC := ptrace/filtergen.c ptrace/filterrules.c
PTRACE_SRC := $(filter-out $(FILTERGEN_SRC),$(sort $(wildcard ptrace/*.c)))
CMD_SRC    := $(sort $(wildcard cmd/*.c))
REPORT_SRC := $(sort $(wildcard report/*.c))
# report.html's files, linked in by report/web_assets.S (.incbin).
WEB_ASSETS := report/web/template.html report/web/style.css \
              report/web/vendor/echarts.min.js report/web/app.js
LIB_OBJ    := $(patsubst %.c,$(OBJDIR)/%.o,$(COMMON_SRC) $(PTRACE_SRC) \
              $(REPORT_SRC)) $(OBJDIR)/report/web_assets.o \
              $(OBJDIR)/gen/filter_bodies.o
CMD_OBJ    := $(patsubst %.c,$(OBJDIR)/%.o,$(CMD_SRC))
UNIT_SRC   := $(sort $(wildcard tests/unit/*.c))
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
HELPERS    := $(patsubst tests/helpers/%.c,build/helpers/%,$(HELPER_SRC)) \
              build/helpers/fileops32 build/helpers/nosuchsyscall32 \
              build/helpers/copyfile-static build/helpers/fdops32 \
              build/helpers/fdops-musl build/helpers/randio32 \
              build/helpers/intrcall32
DEPS_STAMP := $(DEPS)/.built

.PHONY: all deps packages check test unit lint demo bench sanitize clean \
	distclean

all: bin/iowrap

packages:
	@bash ci/install-packages.sh

$(DEPS_STAMP):
	@bash ci/build-deps.sh

deps: $(DEPS_STAMP)

$(OBJDIR)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# No network at build time: the assets are files in the tree.  The check
# refuses any that could end the <script>/<style> element it goes into.
$(OBJDIR)/report/web_assets.o: report/web_assets.S $(WEB_ASSETS) \
		report/web/check-assets.sh
	@mkdir -p $(dir $@)
	@bash report/web/check-assets.sh $(WEB_ASSETS)
	$(CC) -c -o $@ $<

build/filtergen: $(FILTERGEN_SRC) ptrace/filterrules.h ptrace/filter.h \
		$(DEPS_STAMP)
	@mkdir -p build
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(FILTERGEN_SRC) \
		$(DEPS)/lib/libseccomp.a

build/gen/filter_bodies.c: build/filtergen
	@mkdir -p build/gen
	./build/filtergen $@

$(OBJDIR)/gen/filter_bodies.o: build/gen/filter_bodies.c ptrace/filterrules.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/libiowrap.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

bin/iowrap: $(CMD_OBJ) build/libiowrap.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJ) build/libiowrap.a $(LDLIBS)

build/unit-tests: $(UNIT_SRC) build/libiowrap.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $(UNIT_SRC) \
		build/libiowrap.a $(LDLIBS)

# report_write_html() on any JSON file, for tests/test_report_html.py.
build/write-report-html: tests/tools/write_report_html.c build/libiowrap.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< build/libiowrap.a \
		$(LDLIBS)

# Synthetic traces for bench/report_scale.py.
build/gen-traces: tests/tools/gen_traces.c
	@mkdir -p build
	$(HOSTCC) -O2 -Wall -Wextra -Werror -o $@ $<

# Test programs: built with the host's glibc gcc, as users' programs are.
build/helpers/%: tests/helpers/%.c
	@mkdir -p build/helpers
	$(HOSTCC) -O1 -g -Wall -Wextra -Werror -o $@ $< -lpthread

# The same program as an i386 static binary: the filter's and the
# decoder's 32-bit personality (gcc-multilib).
build/helpers/%32: tests/helpers/%.c
	@mkdir -p build/helpers
	$(HOSTCC) -m32 -static -O1 -Wall -Wextra -Werror -o $@ $<

# The same program against musl, whose fstat is the fstat syscall.
build/helpers/%-musl: tests/helpers/%.c
	@mkdir -p build/helpers
	musl-gcc -static -O1 -Wall -Wextra -Werror -o $@ $<

# A static program reads no shared libraries: its file bytes are exact.
build/helpers/%-static: tests/helpers/%.c
	@mkdir -p build/helpers
	$(HOSTCC) -static -O1 -Wall -Wextra -Werror -o $@ $<

unit: build/unit-tests
	./build/unit-tests

# The same sources built with glibc's gcc under AddressSanitizer and
# UndefinedBehaviorSanitizer (neither runs in a static musl binary), for
# `make sanitize`: the unit tests, then the tests on build/san/iowrap.
SAN_DIR   := build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer
SAN_OBJ   := $(patsubst %.c,$(SAN_DIR)/%.o,$(COMMON_SRC) $(PTRACE_SRC) \
             $(REPORT_SRC)) $(OBJDIR)/report/web_assets.o \
             $(SAN_DIR)/gen/filter_bodies.o
SAN_LIBS  := $(DEPS)/lib/libfuse3.a $(DEPS)/lib/libcjson.a -lpthread -lm

$(SAN_DIR)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<

$(SAN_DIR)/gen/filter_bodies.o: build/gen/filter_bodies.c \
		ptrace/filterrules.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(SAN_DIR)/san_options.o: tests/tools/san_options.c
	@mkdir -p $(dir $@)
	$(HOSTCC) $(CFLAGS) -DSAN_LOG_DIR='"$(abspath $(SAN_DIR))/logs"' -c \
		-o $@ $<

$(SAN_DIR)/iowrap: $(patsubst %.c,$(SAN_DIR)/%.o,$(CMD_SRC)) $(SAN_OBJ) \
		$(SAN_DIR)/san_options.o
	$(HOSTCC) $(SAN_FLAGS) -o $@ $^ $(SAN_LIBS)

$(SAN_DIR)/unit-tests: $(UNIT_SRC) $(SAN_OBJ) $(SAN_DIR)/san_options.o
	$(HOSTCC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $^ \
		$(SAN_LIBS)

sanitize: $(SAN_DIR)/iowrap $(SAN_DIR)/unit-tests bin/iowrap build/unit-tests \
		build/write-report-html $(HELPERS)
	@bash tests/sanitize.sh $(SAN_DIR)

test: bin/iowrap build/unit-tests build/write-report-html $(HELPERS)
	$(PYTEST) -q tests

check: packages
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory test

lint:
	clang-format --dry-run --Werror cmd/*.c cmd/*.h common/*.c common/*.h \
		ptrace/*.c ptrace/*.h report/*.c report/*.h tests/unit/*.c \
		tests/unit/*.h tests/helpers/*.c tests/tools/*.c
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --std=c11 -D_GNU_SOURCE -Icommon -Iptrace -Icmd \
		-Ireport cmd common ptrace report

demo: bin/iowrap
	@bash tests/demo/run-demo.sh

bench: bin/iowrap $(HELPERS) build/gen-traces
	@/usr/bin/python3 bench/accuracy.py
	@/usr/bin/python3 bench/overhead.py
	@/usr/bin/python3 bench/report_scale.py

clean:
	rm -rf bin build/obj build/san build/libiowrap.a build/unit-tests \
		build/helpers \
		build/write-report-html build/gen-traces build/filtergen build/gen

distclean: clean
	rm -rf build

-include $(shell find $(OBJDIR) $(SAN_DIR) -name '*.d' 2>/dev/null)
