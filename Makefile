# The README's commands. Each installs libgit2-dev first when the machine lacks it.
SWIFT ?= swift
TRUCE = .build/debug/truce

.PHONY: deps build demo test bench clean

deps:
	@if ! (command -v pkg-config >/dev/null && pkg-config --exists libgit2); then \
		echo "installing libgit2-dev and pkg-config"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgit2-dev pkg-config git; \
	fi

build: deps
	$(SWIFT) build

test: build
	$(SWIFT) test

# Two devices edit notes/todo.md from the same base; the store shows the conflict, then three-way settles it.
demo: build
	@set -e; store=$$(mktemp -d)/store; export TRUCE_STORE=$$store; \
	echo "\$$ truce init"; $(TRUCE) init; \
	printf '# Todo\n\n- buy milk\n- call Ada\n- write report\n' > $$store.base; \
	echo "\$$ truce save notes/todo.md --device laptop"; \
	base=$$($(TRUCE) save notes/todo.md $$store.base --device laptop --date 2026-11-30T09:00:00Z); echo $$base; \
	printf '# Todo\n\n- buy oat milk\n- call Ada\n- write report\n' | $(TRUCE) save notes/todo.md - --device laptop --base $$base --date 2026-11-30T10:00:00Z >/dev/null; \
	printf '# Todo\n\n- buy milk\n- call Ada\n- write the report by Friday\n' | $(TRUCE) save notes/todo.md - --device phone --base $$base --date 2026-11-30T10:05:00Z >/dev/null 2>&1; \
	echo "(laptop and phone both saved from $$(echo $$base | cut -c1-7))"; echo; \
	echo "\$$ truce status"; $(TRUCE) status; echo; \
	echo "\$$ truce versions notes/todo.md"; $(TRUCE) versions notes/todo.md; echo; \
	echo "\$$ truce explain notes/todo.md"; $(TRUCE) explain notes/todo.md; echo; \
	echo "\$$ truce cat notes/todo.md"; $(TRUCE) cat notes/todo.md; echo; \
	echo "\$$ git -C $$store log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso"; \
	git -C $$store log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso 2>/dev/null; echo; \
	echo "\$$ echo '*.md merge=three-way' >> $$store/info/attributes"; echo '*.md merge=three-way' >> $$store/info/attributes; \
	echo "\$$ truce resolve notes/todo.md --device demo"; $(TRUCE) resolve notes/todo.md --device demo; echo; \
	echo "\$$ truce cat notes/todo.md"; $(TRUCE) cat notes/todo.md; echo; \
	echo "\$$ git -C $$store log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso"; \
	git -C $$store log --graph --glob='refs/truce/heads/*' --format='%h %an %ad %s' --date=iso 2>/dev/null; echo; \
	echo "\$$ git -C $$store log --format='%h %an %s' refs/truce/journal   # the change journal"; \
	git -C $$store log --format='%h %an %s' refs/truce/journal 2>/dev/null; \
	echo; echo "store kept at $$store"

# Truce against its git baselines; BENCH_FLAGS=--quick for a short run, --json for machines.
bench: deps
	$(SWIFT) run -c release truce-bench $(BENCH_FLAGS)

clean:
	rm -rf .build
