# shellcheck shell=bash
# scripts/lib/runchart.sh — the quick start's terminal chart: the numbers of
# the Grafana dashboard (etc/grafana/gridbroker.json) for a first run,
# without Grafana. Plain text within 80 columns, bash and awk only.
#
# Sourced, never run: it defines functions and sets nothing else.
#   chart_sample FILE URL...   loop (run it in the background, kill it to
#                              stop): once a second append to FILE one line
#                              "ELAPSED T J S P U": seconds since the loop
#                              began and the decisions counted so far by
#                              the workers at URL (host:port of /metrics),
#                              summed, per request type (task.broker,
#                              job.broker, job.submit, pilot.match,
#                              job.status)
#   chart_decisions FILE       print the decisions per second over the run
#                              from those lines as a stacked column chart,
#                              a letter per request type: a column a
#                              second (a run over 64 s: a column per N s),
#                              widened up to 6 characters for a short run
#   chart_bars                 print "NAME COUNT" lines from stdin as
#                              horizontal bars, longest first
#
# A "decision" is what the dashboard's "Decisions per second by worker"
# counts: gridbroker_requests_total of every outcome but duplicate, parked,
# error and dead_lettered.

chart_sample() {
	local file=$1 t0=${EPOCHREALTIME/./} now u
	shift
	while :; do
		now=${EPOCHREALTIME/./}
		for u in "$@"; do
			curl -s --max-time 1 "http://$u/metrics" || true
		done | awk -v t="$(((now - t0) / 1000))" '
			BEGIN { split("task.broker job.broker job.submit pilot.match job.status", k, " ")
				for (i = 1; i <= 5; i++) col[k[i]] = i }
			/^gridbroker_requests_total\{/ {
				if (!match($1, /type="[^"]*"/)) next
				ty = substr($1, RSTART + 6, RLENGTH - 7)
				if ($1 ~ /outcome="(duplicate|parked|error|dead_lettered)"/ || !(ty in col)) next
				n[col[ty]] += $2 }
			END { printf "%.3f", t / 1000; for (i = 1; i <= 5; i++) printf " %d", n[i]; printf "\n" }' >>"$file"
		sleep 1
	done
}

chart_decisions() {
	awk -v H=8 -v W=64 '
	{ n++; t[n] = $1; for (k = 1; k <= 5; k++) c[n, k] = $(k + 1) }
	END {
		split("T J S P U", sym, " ")
		split("task.broker job.broker job.submit pilot.match job.status", name, " ")
		if (n < 2) { print "  (the run was too short to chart)"; exit }
		dur = t[n] - t[1]
		bw = 1                      # seconds a column stands for
		while (dur / bw >= W) bw++
		ncol = 0
		for (j = 2; j <= n; j++) {  # each interval goes to the column of its start
			col = int((t[j - 1] - t[1]) / bw) + 1
			if (col > ncol) ncol = col
			for (k = 1; k <= 5; k++) { d = c[j, k] - c[j - 1, k]; if (d < 0) d = 0; v[col, k] += d; sum[k] += d }
		}
		peak = 0
		for (i = 1; i <= ncol; i++) {
			tot[i] = 0
			for (k = 1; k <= 5; k++) { v[i, k] /= bw; tot[i] += v[i, k] }
			if (tot[i] > peak) { peak = tot[i]; at = i }
		}
		all = 0
		for (k = 1; k <= 5; k++) all += sum[k]
		cw = int(W / ncol)          # a short run gets wider columns
		if (cw > 6) cw = 6
		if (cw < 1) cw = 1
		if (peak == 0) { printf "decisions per second: none counted in %.0f s\n", dur; exit }
		printf "decisions per second, both workers (a column = %d s; peak %.0f/s at %d-%d s)\n", bw, peak, (at - 1) * bw, at * bw
		for (r = H; r >= 1; r--) {
			if (r == H) printf "%5.0f |", peak; else printf "      |"
			mid = (r - 0.5) * peak / H
			line = ""
			for (i = 1; i <= ncol; i++) {
				ch = " "
				if (tot[i] >= mid || (r == 1 && tot[i] > 0)) {
					acc = 0; best = 0; ch = ""
					for (k = 1; k <= 5; k++) {
						if (v[i, k] > best) { best = v[i, k]; bk = k }
						acc += v[i, k]
						if (ch == "" && acc >= mid) ch = sym[k]
					}
					if (ch == "") ch = sym[bk]
				}
				for (x = 1; x < cw; x++) line = line (ch == " " ? " " : ch)
				line = line (cw > 1 ? " " : ch)
			}
			sub(/ +$/, "", line)
			print line
		}
		axis = ""; lab = ""
		for (i = 1; i <= ncol * cw; i++) axis = axis "-"
		printf "    0 +%s\n", axis
		step = cw >= 5 ? 1 : int(10 / cw)   # a time label every 10 characters or so
		for (i = 1; i <= ncol; i += step) lab = lab sprintf("%-" step * cw "s", ((i - 1) * bw) "s")
		sub(/ +$/, "", lab)
		printf "       %s\n", lab
		printf "       "
		for (k = 1; k <= 5; k++) printf "%s %s%s", sym[k], name[k], k < 5 ? ", " : "\n"
		printf "       in %.0f s: %d decisions (", dur, all
		for (k = 1; k <= 5; k++) printf "%s %d%s", sym[k], sum[k], k < 5 ? ", " : ")\n"
	}' "$1"
}

chart_bars() {
	sort -k2,2nr -k1,1 | awk -v W=40 '
	{ n++; name[n] = $1; v[n] = $2; if ($2 > max) max = $2; if (length($1) > w) w = length($1) }
	END {
		if (n == 0) { print "  (none)"; exit }
		if (w > 24) w = 24
		for (i = 1; i <= n; i++) {
			len = max ? int(v[i] * W / max + 0.5) : 0
			if (v[i] > 0 && len == 0) len = 1
			bar = ""
			for (j = 0; j < len; j++) bar = bar "#"
			printf "  %-" w "s %-" W "s %d\n", substr(name[i], 1, w), bar, v[i]
		}
	}'
}
