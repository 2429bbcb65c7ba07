#!/bin/sh
# The engine boundary (make lint): the tracer and everything above it
# drive the agent engine through the tracer's engine interface
# (target/tracer/engine_ops.h), never through the agent's own headers.
# Only target/agent/ itself, and the tests and fuzzers of it under
# selftest/, include a header of target/agent/.  Exit 1, naming each
# include that crosses the boundary.
cd "$(dirname "$0")/.." || exit 2
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*agent/[^">]*[">]' \
          --include='*.c' --include='*.h' target host-fs shared arch |
      grep -v '^target/agent/')
if [ -n "$bad" ]; then
    printf '%s\n' "$bad" | sed 's/$/  <- outside target\/agent\/: use target\/tracer\/engine_ops.h/' >&2
    echo "engine-boundary: the agent's headers are included from above the tracer" >&2
    exit 1
fi
echo "engine-boundary: no include of the agent's headers outside target/agent/"
