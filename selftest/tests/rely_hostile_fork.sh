#!/usr/bin/env bash
# A hostile target under memtrace -f (its children made with CLONE_FILES): see rely_hostile.bash.
HOSTILE_MODE=fork exec bash "$MT_ROOT/selftest/tests/rely_hostile.bash"
