# The README's commands. Each installs libgit2-dev, libsodium-dev (the encrypted hub's cryptography) and the benchmark's
# libsqlite3-dev first when the machine lacks them;
# `make test` also installs the servers and tools its tests run against (test-deps).
SWIFT ?= swift
TRUCE = .build/debug/truce

.PHONY: deps test-deps build demo test snippets fixture api-check bench docs lint clean

# swift-format, from the toolchain, with the project's .swift-format: any finding fails.
lint:
	$(SWIFT) format lint --strict --recursive Sources Plugins Tests Package.swift

deps:
	@if ! (command -v pkg-config >/dev/null && pkg-config --exists libgit2); then \
		echo "installing libgit2-dev and pkg-config"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgit2-dev pkg-config git; \
	fi
	@if ! pkg-config --exists libsodium; then \
		echo "installing libsodium-dev"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsodium-dev; \
	fi
	@# truce-bench links SQLite, its durable saves' peer, and `swift build` builds every target.
	@if ! pkg-config --exists sqlite3; then \
		echo "installing libsqlite3-dev"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev; \
	fi

# Real counterparts the tests run against: a web server for git http-backend (with TLS), sshd and its client, openssl
# for the test CA, tmux for the terminal tests and vim for `resolve --tool vimdiff`. git-daemon comes with git itself
# (/usr/lib/git-core/git-daemon).
# `make test` runs this first, and so does .ci/run through it: the one place these are installed.
TEST_PACKAGES = lighttpd lighttpd-mod-openssl openssh-server openssh-client openssl tmux vim

test-deps:
	@if ! (command -v lighttpd && command -v sshd && command -v ssh-agent && command -v openssl && command -v tmux && command -v vim) >/dev/null 2>&1 \
		|| [ ! -e /usr/lib/lighttpd/mod_openssl.so ]; then \
		echo "installing $(TEST_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

# The documentation's snippets first (seconds), then the suite, then the package an adopter wrote against 0.1.0.
test: build test-deps
	Tests/Snippets/check $(SWIFT)
	$(SWIFT) test
	$(MAKE) fixture

# Every ```swift block of README.md and the DocC articles, compiled against the build with every warning but an unused
# local failing it (Tests/Snippets/check; Tests/README.md, "Documentation snippets").
snippets: build
	Tests/Snippets/check $(SWIFT)

# Tests/Fixtures/Adopter, a package of its own written against 0.1.0, built against this checkout in a scratch
# directory of its own (it builds Truce again, as a dependency) and tested. It must build with deprecation warnings
# only: its sources are touched so that their warnings are seen on every run. The root package must not see it: no
# target's path may contain it (SwiftPM would compile a nested package inside a target's folder as sources).
FIXTURE = Tests/Fixtures/Adopter
FIXTURE_BUILD = .build/fixtures/adopter

fixture: deps
	@$(SWIFT) package describe --type json | sed -n 's/^ *"path" : "\([^"/][^"]*\)",*$$/\1/p' | while read -r path; do \
		case "$(FIXTURE)/" in "$$path"/*) echo "make fixture: the target at $$path contains $(FIXTURE)" >&2; exit 1;; esac; \
	done
	@touch $$(find $(FIXTURE)/Sources $(FIXTURE)/Tests -name '*.swift')
	@mkdir -p $(FIXTURE_BUILD); status=0; \
	$(SWIFT) build --build-tests --package-path $(FIXTURE) --scratch-path $(FIXTURE_BUILD) > $(FIXTURE_BUILD).log 2>&1 || status=$$?; \
	if [ $$status -ne 0 ]; then cat $(FIXTURE_BUILD).log; echo "make fixture: the adopter fixture does not build" >&2; exit $$status; fi; \
	grep -E '^Build complete' $(FIXTURE_BUILD).log
	@if grep -E '^/.*/$(FIXTURE)/.*: (warning|error): ' $(FIXTURE_BUILD).log | grep -v ' is deprecated' | sort -u | grep .; then \
		echo "make fixture: the adopter fixture must build with deprecation warnings only" >&2; exit 1; fi
	$(SWIFT) test --skip-build --package-path $(FIXTURE) --scratch-path $(FIXTURE_BUILD)

# The public API against the last release, each break announced in CHANGELOG.md (.ci/api-breaks has the rules). CI
# runs it (.ci/run); it builds the release once, in .build/api-baseline, so it is not part of `make test`.
api-check: deps
	SWIFT=$(SWIFT) .ci/api-check

# A laptop and a phone edit notes/todo.md from the same base and sync through a hub; each settles what it
# sees with the routing the laptop put in the store, and both end on the same resolution commit.
demo: build
	@set -e; top=$$(mktemp -d); hub=$$top/hub; laptop=$$top/laptop; phone=$$top/phone; T=$(CURDIR)/$(TRUCE); \
	git init -q --bare $$hub; for s in laptop phone; do $$T --store $$top/$$s init >/dev/null; done; \
	echo "(a hub, $$hub, made with git init --bare: any git server would do; and a store each for the laptop and the phone)"; echo; \
	printf '# Todo\n\n- buy milk\n- call Ada\n- write report\n' > $$top/todo.md; \
	echo "\$$ truce --store laptop save notes/todo.md todo.md --device laptop"; \
	$$T --store $$laptop save notes/todo.md $$top/todo.md --device laptop --date 2026-11-30T09:00:00Z; \
	echo "\$$ echo '*.md merge=three-way' | truce --store laptop save .truce/attributes -   # routing travels with the data"; \
	echo '*.md merge=three-way' | $$T --store $$laptop save .truce/attributes - --device laptop --date 2026-11-30T09:00:00Z >/dev/null; \
	echo "\$$ truce --store laptop sync hub; truce --store phone sync hub"; \
	$$T --store $$laptop sync $$hub; $$T --store $$phone sync $$hub; echo; \
	echo "(offline, both edit the list)"; \
	printf '# Todo\n\n- buy oat milk\n- call Ada\n- write report\n' | $$T --store $$laptop save notes/todo.md - --device laptop --date 2026-11-30T10:00:00Z >/dev/null; \
	printf '# Todo\n\n- buy milk\n- call Ada\n- write the report by Friday\n' | $$T --store $$phone save notes/todo.md - --device phone --date 2026-11-30T10:05:00Z >/dev/null; \
	echo "\$$ truce --store laptop sync hub; truce --store phone sync hub; truce --store laptop sync hub"; \
	$$T --store $$laptop sync $$hub; $$T --store $$phone sync $$hub; $$T --store $$laptop sync $$hub; echo; \
	echo "\$$ truce --store phone status"; $$T --store $$phone status; echo; \
	echo "\$$ truce --store phone versions notes/todo.md"; $$T --store $$phone versions notes/todo.md; echo; \
	echo "\$$ truce --store phone explain notes/todo.md"; $$T --store $$phone explain notes/todo.md; echo; \
	echo "(each device settles what it sees, without waiting for the other)"; \
	echo "\$$ truce --store laptop resolve --all --device laptop"; $$T --store $$laptop resolve --all --device laptop; \
	echo "\$$ truce --store phone resolve --all --device phone"; $$T --store $$phone resolve --all --device phone; echo; \
	echo "\$$ truce --store laptop sync hub; truce --store phone sync hub   # the two resolutions are one commit"; \
	$$T --store $$laptop sync $$hub; $$T --store $$phone sync $$hub; echo; \
	echo "(the same resolution commit on every replica: one head, the same id)"; \
	for s in laptop phone; do printf '%-7s ' $$s; $$T --store $$top/$$s versions notes/todo.md | sed -n 2p; done; echo; \
	echo "\$$ git -C hub for-each-ref --format='%(refname)'   # one ref, the hub's index of the replicas' manifests"; \
	git -C $$hub for-each-ref --format='%(refname)'; echo; \
	echo "\$$ truce --store phone cat notes/todo.md"; $$T --store $$phone cat notes/todo.md; echo; \
	echo "\$$ git -C phone log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso -- notes/todo.md"; \
	git -C $$phone log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso -- notes/todo.md 2>/dev/null; echo; \
	echo "\$$ git -C laptop log --format='%h %an %s' refs/truce/journal   # the laptop's change journal: who did what here"; \
	git -C $$laptop log --format='%h %an %s' refs/truce/journal 2>/dev/null; echo; \
	echo "(a second hub that its server cannot read: sealed entries only, readable by the devices holding the store's keys)"; \
	git init -q --bare $$top/sealed; \
	echo "\$$ truce --store laptop hub encrypt sealed"; $$T --store $$laptop hub encrypt $$top/sealed; \
	echo "\$$ truce --store phone hub join sealed"; $$T --store $$phone hub join $$top/sealed; \
	device=$$($$T --store $$phone hub devices $$top/sealed --json | sed -n 's/.*"thisDevice" : "\(.*\)".*/\1/p'); \
	echo "\$$ truce --store laptop hub approve $$device sealed"; $$T --store $$laptop hub approve $$device $$top/sealed >/dev/null; \
	echo "\$$ truce --store laptop sync sealed; truce --store phone sync sealed"; \
	$$T --store $$laptop sync $$top/sealed; $$T --store $$phone sync $$top/sealed; \
	echo "\$$ echo '- buy milk for the party' | truce --store phone save notes/party.md -; truce --store phone sync sealed; truce --store laptop sync sealed"; \
	echo '- buy milk for the party' | $$T --store $$phone save notes/party.md - --device phone >/dev/null; \
	$$T --store $$phone sync $$top/sealed; $$T --store $$laptop sync $$top/sealed; echo; \
	echo "\$$ git -C sealed for-each-ref --format='%(refname)'; every object, inflated, searched for the list"; \
	git -C $$top/sealed for-each-ref --format='%(refname)'; \
	git -C $$top/sealed cat-file --batch-all-objects --batch | grep -ac 'milk' | sed 's/^/lines with "milk" on the sealed hub: /'; \
	echo; echo "stores kept in $$top"

# Truce against its git baselines; BENCH_FLAGS=--quick for a short run, --json for machines. The memory row runs
# the release `truce` next to the bench, so it is built first.
bench: deps
	$(SWIFT) build -c release --static-swift-stdlib --product truce
	$(SWIFT) run -c release --static-swift-stdlib truce-bench $(BENCH_FLAGS)

# The API reference: `swift build`, then swift-symbolgraph-extract reads the public API of each library module from
# the build, and docc converts the catalog with those symbol graphs into .build/docs, a static site
# (`python3 -m http.server -d .build/docs`, then /documentation/trucecore). docc and swift-symbolgraph-extract are
# the toolchain's: on PATH, else next to swift. Warnings fail it (DOCC_FLAGS= to only see them), so a broken link
# is seen at once. (`swift package dump-symbol-graph` fails here on the test runner's modules.)
DOC_MODULES = TruceCore Truce TruceCommandLine OverwriteWithCurrent ThreeWayMerge ListConflicts UnionMerge \
	LastWriterWins Deduplicate ExternalDriver StructuredMerge
DOCC_FLAGS ?= --warnings-as-errors

docs: build
	@set -e; \
	tools=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")"); \
	docc=$$(command -v docc || echo "$$tools/docc"); \
	extract=$$(command -v swift-symbolgraph-extract || echo "$$tools/swift-symbolgraph-extract"); \
	for t in "$$docc" "$$extract"; do [ -x "$$t" ] || { echo "make docs: $$t: not found on PATH or next to $(SWIFT)" >&2; exit 1; }; done; \
	bin=$$($(SWIFT) build --show-bin-path); \
	triple=$$($(SWIFT) -print-target-info | sed -n 's/^ *"triple": *"\([^"]*\)".*/\1/p' | head -n 1); \
	graphs=.build/docs-symbolgraphs; rm -rf "$$graphs"; mkdir -p "$$graphs/modules"; \
	printf 'module CGitShim {\n    umbrella header "%s/Sources/CGitShim/include/CGitShim.h"\n    export *\n}\n' "$(CURDIR)" \
		> "$$graphs/modules/CGitShim.modulemap"; \
	set -- -target "$$triple" -I "$$bin/Modules" -module-cache-path "$$graphs/modules/cache" \
		-Xcc -fmodule-map-file="$(CURDIR)/Sources/CLibgit2/module.modulemap" \
		-Xcc -fmodule-map-file="$(CURDIR)/$$graphs/modules/CGitShim.modulemap" \
		-Xcc -fmodule-map-file="$(CURDIR)/Sources/CSodium/module.modulemap" \
		-Xcc -fmodule-map-file="$$bin/CAllocator.build/module.modulemap" \
		-minimum-access-level public -output-dir "$$graphs"; \
	for flag in $$(pkg-config --cflags libgit2 libsodium); do set -- "$$@" -Xcc "$$flag"; done; \
	if [ "$$(uname)" = Darwin ]; then set -- "$$@" -sdk "$$(xcrun --show-sdk-path)"; fi; \
	for m in $(DOC_MODULES); do "$$extract" -module-name "$$m" "$$@"; done; \
	"$$docc" convert Sources/TruceCore/TruceCore.docc --additional-symbol-graph-dir "$$graphs" \
		--output-path .build/docs $(DOCC_FLAGS); \
	echo "documentation in .build/docs"

clean:
	rm -rf .build
