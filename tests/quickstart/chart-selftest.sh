#!/usr/bin/env bash
# The quick start's terminal chart (scripts/lib/runchart.sh) on made-up
# samples, no server: the exact chart of a short run (stacking, letters,
# axis, totals), a long run folded into 3-second columns within 80
# columns, the runs too short or without a decision, and the bars of
# matches by group. ctest runs it as unit.quickstart_chart.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../../scripts/lib/runchart.sh
. "$ROOT/scripts/lib/runchart.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-chart.XXXXXX")
trap 'rm -rf "$T"' EXIT
bad=0
# same NAME EXPECTED-FILE GOT-FILE
same() {
	if ! diff -u "$2" "$3"; then
		echo "FAIL: $1" >&2
		bad=1
	fi
}

# 4 s: 11 tasks, 9 job requests, a submit; 8 pilots; 1 job.status, 5 jobs.
cat >"$T/short.txt" <<'S'
0.000 0 0 0 0 0
1.020 11 9 1 0 0
2.040 11 9 1 8 0
3.060 11 9 1 8 1
4.080 11 14 1 8 1
S
chart_decisions "$T/short.txt" >"$T/short.out"
cat >"$T/short.want" <<'S'
decisions per second, both workers (a column = 1 s; peak 21/s at 0-1 s)
   21 |JJJJJ
      |JJJJJ
      |JJJJJ
      |JJJJJ
      |TTTTT
      |TTTTT PPPPP
      |TTTTT PPPPP       JJJJJ
      |TTTTT PPPPP UUUUU JJJJJ
    0 +------------------------
       0s    1s    2s    3s
       T task.broker, J job.broker, S job.submit, P pilot.match, U job.status
       in 4 s: 35 decisions (T 11, J 14, S 1, P 8, U 1)
S
same "short run" "$T/short.want" "$T/short.out"

# 151 s: a column per 3 s, every line within 80 columns.
awk 'BEGIN { for (i = 0; i <= 150; i++) printf "%.3f %d %d 0 %d 0\n", i * 1.01, 3 * i, 10 * i, (i % 7 == 0) ? 40 * i : 2 * i }' >"$T/long.txt"
chart_decisions "$T/long.txt" >"$T/long.out"
grep -q '^decisions per second, both workers (a column = 3 s;' "$T/long.out" || { echo "FAIL: long run not in 3 s columns" >&2; cat "$T/long.out"; bad=1; }
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/long.out")
[ "$w" -le 80 ] || { echo "FAIL: long run chart is $w columns wide" >&2; cat "$T/long.out"; bad=1; }
[ "$(grep -c '|' "$T/long.out")" = 8 ] || { echo "FAIL: long run chart is not 8 rows high" >&2; bad=1; }

echo "1.0 0 0 0 0 0" >"$T/one.txt"
[ "$(chart_decisions "$T/one.txt")" = "  (the run was too short to chart)" ] || { echo "FAIL: one sample" >&2; bad=1; }
printf '0 5 0 0 0 0\n1.01 5 0 0 0 0\n' >"$T/none.txt"
[ "$(chart_decisions "$T/none.txt")" = "decisions per second: none counted in 1 s" ] || { echo "FAIL: no decision" >&2; bad=1; }

printf 'lhcb_mc\t3\nlhcb_user\t4\n(no_match)\t1\n' | chart_bars >"$T/bars.out"
cat >"$T/bars.want" <<'S'
  lhcb_user  ######################################## 4
  lhcb_mc    ##############################           3
  (no_match) ##########                               1
S
same "bars" "$T/bars.want" "$T/bars.out"

if ((bad)); then exit 1; fi
echo "chart-selftest: ok"
