# Helpers the make bench scripts share (sourced, not run).
# now_us: the wall clock in microseconds.
now_us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }
# median X...: the median of the figures given (none: an empty line).
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# calc EXPR [DIGITS]: EXPR evaluated by awk, DIGITS (2) after the point.
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
# wall_us CMD...: CMD's wall time in microseconds; its stdout and stderr
# go to $TMP/out (TMP: the calling script's scratch folder).
wall_us() { local t0 t1; t0=$(now_us); "$@" >"$TMP/out" 2>&1; t1=$(now_us); echo $((t1 - t0)); }
# verdict CONDITION: "met" if the awk CONDITION holds, else "MISSED".
verdict() { awk "BEGIN { print ($1) ? \"met\" : \"MISSED\" }"; }
