#!/usr/bin/env bash
# The Grafana dashboard (etc/grafana/gridbroker.json) and the Prometheus
# rules (etc/prometheus/gridbroker-rules.yml) name only series a real
# worker exports: start a worker, scrape its /metrics, and compare every
# metric name their PromQL uses (scripts/lib/promql.py) with the families
# the scrape declares, and every label value they select exactly (such as
# what="tasks_pending", type="pilot.match") with the series it carries. A
# renamed metric or label value then fails here instead of leaving an
# empty panel or an alert that can never fire. `up` is Prometheus' own.
# Whether the rules parse and fire is unit.prometheus_rules.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

PROMQL=$GB_SRC/scripts/lib/promql.py
DASH=$GB_SRC/etc/grafana/gridbroker.json
RULES=$GB_SRC/etc/prometheus/gridbroker-rules.yml

# The local config listens on port 0: the worker logs the port it took.
start_worker d1
wait_until 30 "grep -q 'metrics: listening on' '$T/d1.log'" || fail "worker d1 logged no metrics address"
addr=$(sed -n 's/.*metrics: listening on \([0-9.]*:[0-9]*\).*/\1/p' "$T/d1.log" | head -1)
[ -n "$addr" ] || fail "no metrics address in: $(grep metrics: "$T/d1.log")"
# the backlog gauges are counted with the worker's first ticks
wait_until 60 "curl -s 'http://$addr/metrics' | grep -q '^gridbroker_backlog_time_seconds [1-9]'" ||
	fail "the backlog was never counted"
curl -sS --max-time 5 "http://$addr/metrics" >"$T/scrape.prom" || fail "scrape of $addr"
log "scraped $addr: $(grep -c '^# TYPE' "$T/scrape.prom") families, $(grep -vc '^#' "$T/scrape.prom") series"

n=$(python3 "$PROMQL" names "$DASH" "$RULES" | wc -l)
[ "$n" -ge 10 ] || fail "only $n metric names found in the dashboard and the rules"
python3 "$PROMQL" check-names "$T/scrape.prom" "$DASH" "$RULES" >"$T/check.out" 2>&1 ||
	fail "the dashboard or the rules name series the worker does not export:
$(cat "$T/check.out")"
log "the dashboard and the rules use $n metric names, all exported: $(python3 "$PROMQL" names "$DASH" "$RULES" | tr '\n' ' ')"

# The check itself must be able to fail: a misspelled name, a label value
# no series has.
sed 's/gridbroker_dead_letters_total/gridbroker_dead_letter_total/; s/what=~"tasks_pending|/what=~"task_pending|/' \
	"$RULES" >"$T/broken-rules.yml"
if python3 "$PROMQL" check-names "$T/scrape.prom" "$T/broken-rules.yml" >"$T/broken.out" 2>&1; then
	fail "check-names passed rules with a misspelled series"
fi
grep -q 'gridbroker_dead_letter_total is not exported' "$T/broken.out" || fail "misspelled name not reported: $(cat "$T/broken.out")"
grep -q 'no gridbroker_backlog series has what="task_pending"' "$T/broken.out" || fail "wrong label value not reported: $(cat "$T/broken.out")"
log "a misspelled series and label value in a copy of the rules are refused"
log "PASS"
