# ccm: every target sets itself up from a fresh clone (venv, dependencies, binaries).
#
#   make run     build dist/ccm.pyz and apply the bundled demo manifest to a scratch dir
#   make test    create .venv, install what the tests need, run the suite
#   make bench   benchmarks (figures, not pass/fail)
#   make lint typecheck   ruff and mypy (zero findings; CI runs both)

SHELL := /bin/bash
# Test on the oldest CPython we support when this machine has it (pyenv), else python3.
PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.9*/bin/python3.9 /root/.pyenv/versions/3.9*/bin/python3.9) $(shell command -v python3))
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCRATCH ?= $(CURDIR)/build/demo-root
PYTEST_WORKERS ?= 2

.PHONY: all venv pyz run test test-unit test-apt test-sysv test-hosts test-dnf test-systemd test-nats-cluster test-report-html test-agent bench clean lint typecheck test-reliability test-reliability-ci test-concurrency test-crash doc-tools

all: pyz

$(STAMP): pyproject.toml requirements.txt requirements-dev.txt
	@test -n "$(PYTHON)" || { echo "python3 not found" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(VPY) -m pip install -q --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

# ARCH=aarch64 and PYTHONS=3.9,3.11 override build_zipapp.py's defaults (host arch, 3.9-3.14).
pyz: $(STAMP)
	$(VPY) build_zipapp.py $(if $(ARCH),--arch $(ARCH)) $(if $(PYTHONS),--pythons $(PYTHONS))

run: pyz
	@echo "--- hierarchical data of the demo, resolved against this host's facts ---"
	cd demo && ../dist/ccm.pyz hiera parse data.yaml
	rm -rf "$(SCRATCH)" && mkdir -p "$(SCRATCH)"
	cd demo && CCM_DEMO_ROOT="$(SCRATCH)" CCM_DEMO_OWNER="$$(id -un)" CCM_DEMO_GROUP="$$(id -gn)" ../dist/ccm.pyz apply manifest.yaml
	@echo "--- second run: everything should be stable ---"
	cd demo && CCM_DEMO_ROOT="$(SCRATCH)" CCM_DEMO_OWNER="$$(id -un)" CCM_DEMO_GROUP="$$(id -gn)" ../dist/ccm.pyz apply manifest.yaml
	@echo "--- demo output in $(SCRATCH) ---"
	@find "$(SCRATCH)" -type f | sort

# The default suite; real-system suites follow when this host can run them (root).
test: $(STAMP) doc-tools
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) tests
	$(MAKE) --no-print-directory test-agent
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory test-sysv test-apt; \
	 else echo "not root: skipping the apt and sysv suites"; fi

test-unit: $(STAMP) doc-tools
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) tests

# The agent's timing-based cycle tests (about 15 s, no root, nothing outside temp dirs).
test-agent: $(STAMP)
	$(VPY) -m pytest -q -p no:xdist -m agent_slow tests/agent

# The man page and completion tests run the real groff, bash and zsh (Debian: groff-base, zsh); the
# NATS TLS tests make their certificates with the openssl CLI (Debian: openssl).
doc-tools:
	@missing=""; command -v zsh >/dev/null 2>&1 || missing="$$missing zsh"; \
	 command -v groff >/dev/null 2>&1 || missing="$$missing groff-base"; \
	 command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	 if [ -n "$$missing" ]; then \
	   if [ "$$(id -u)" = 0 ]; then \
	     (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || \
	      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; }) >/dev/null || \
	     echo "doc-tools: could not install$$missing; the man page, completion and NATS TLS tests will say so" >&2; \
	   else echo "doc-tools: install$$missing for the man page, completion and NATS TLS tests" >&2; fi; fi

test-apt: $(STAMP)
	$(VPY) -m pytest -q -p no:xdist -m apt tests

test-sysv: $(STAMP)
	$(VPY) -m pytest -q -p no:xdist -m sysv tests

# Operator safety: many concurrent apply pairs on one session store (CCM_CONCURRENT_PAIRS, default 30; ~1 min).
test-concurrency: $(STAMP)
	$(VPY) -m pytest -q -p no:xdist -m reliability tests/operator

# A real 3-node JetStream cluster on loopback with a node SIGKILLed mid-run, plus
# single-server faults, and fleet reports with the stream leader killed while 1,000 hosts
# publish; the pyz runs the applies on the distro python3 (about 3-4 minutes).
test-nats-cluster: pyz
	$(VPY) -m pytest -q -p no:xdist -m nats_cluster tests/nats tests/fleet

# The fleet report page (ccm report fleet --html) rendered by headless Chromium and read by
# w3m (issue 28); installs Debian's chromium and w3m when missing (root). About 20 s.
test-report-html: $(STAMP)
	@$(call debs,chromium w3m,chromium w3m)
	$(VPY) -m pytest -q -p no:xdist -m report_html tests/fleet

# Minimal Debian roots (debootstrap, cached in build/hosts), needs root; prints the timings.
test-hosts: pyz
	CCM_TEST_PYZ=$(CURDIR)/dist/ccm.pyz $(VPY) -m pytest -q -rs -p no:xdist -m hosts tests/hosts

# Real dnf/rpm under an --installroot, and real systemd as PID 1 in systemd-nspawn (root;
# each installs its Debian packages when missing; the container root is cached in build/hosts).
# ~30 s and ~1-2 min (plus ~40 s once for the debootstrap root).
debs = for t in $(1); do command -v $$t >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends $(2) >/dev/null; break; }; done

test-dnf: $(STAMP)
	@$(call debs,dnf rpmbuild createrepo_c,dnf rpm createrepo-c)
	$(VPY) -m pytest -q -p no:xdist -m dnf tests

test-systemd: pyz
	@$(call debs,systemd-nspawn nsenter debootstrap,systemd-container debootstrap)
	$(VPY) -c 'import sys; sys.path.insert(0, "."); from tests.hosts.roots import ensure_root; ensure_root("bookworm", flavour="systemd")'
	CCM_TEST_PYZ=$(CURDIR)/dist/ccm.pyz $(VPY) -m pytest -q -p no:xdist -m systemd tests

# Static checks (configured in pyproject.toml): ruff (E, F, B, C90 with a complexity cap that only goes down) and mypy, both zero findings.
lint: $(STAMP)
	$(VENV)/bin/ruff check ccm pyzboot tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The standing hostile-input suite (issues 15, 24): bad-input catalogue, 100 kill -9 trials,
# seeded fuzzing, hostile archives/HTTP, canaries, permissions (as root also as nobody,
# with fs.protected_* at 0, restored by the last test that needed it), trust rules,
# 3000-trial swap races on the session store and lock directory (CCM_RACE_TRIALS) and root's
# runs against a user swapping the extraction root (CCM_SWAP_RACE_RUNS per case). About 20
# minutes on 2 cores; the ci variant about 3.
test-reliability: pyz
	CCM_KILL_TRIALS=$${CCM_KILL_TRIALS:-100} CCM_FUZZ_EXAMPLES=$${CCM_FUZZ_EXAMPLES:-2000} \
	  CCM_RACE_TRIALS=$${CCM_RACE_TRIALS:-3000} CCM_SWAP_RACE_RUNS=$${CCM_SWAP_RACE_RUNS:-100} \
	  $(VPY) -m pytest -q -rs -n $(PYTEST_WORKERS) -m 'reliability or not reliability' tests/reliability

# pyz: the checks as `nobody` run the shipped file (the venv is under root's 0700 home).
test-reliability-ci: pyz
	CCM_KILL_TRIALS=$${CCM_KILL_TRIALS:-8} CCM_FUZZ_EXAMPLES=$${CCM_FUZZ_EXAMPLES:-150} \
	  CCM_RACE_TRIALS=$${CCM_RACE_TRIALS:-300} CCM_SWAP_RACE_RUNS=$${CCM_SWAP_RACE_RUNS:-8} \
	  $(VPY) -m pytest -q -rs -n $(PYTEST_WORKERS) -m 'reliability or not reliability' tests/reliability

# 100 kill -9 trials at random moments of a batched first run of 200 files (issue 16).
test-crash: $(STAMP)
	CCM_CRASH_TRIALS=$${CCM_CRASH_TRIALS:-100} $(VPY) -m pytest -q -rs -n $(PYTEST_WORKERS) -m crash tests/crash

bench: pyz
	@for b in bench/bench_*.py; do echo "== $$b"; $(VPY) $$b || exit 1; done

clean:
	rm -rf build dist $(VENV) .pytest_cache
