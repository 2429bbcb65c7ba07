#!/usr/bin/env bash
# A hostile target under memtrace -p (attached): see rely_hostile.bash.
HOSTILE_MODE=attach exec bash "$MT_ROOT/selftest/tests/rely_hostile.bash"
