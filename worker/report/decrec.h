/*
** decrec.h — the decision record: the JSON kept with every decision
** (decisions.detail, pilot_matches.detail) so that `gridbroker why` can
** answer "why did it go there, or nowhere?" after the inputs are gone.
**
** Every brokerage builds its own detail object (the same one `explain
** --json` prints); dr_finish turns it into the stored record: it adds the
** digest, each stage's main cut reason, and bounds the size. Pure: no I/O,
** no clock; OpenSSL only for SHA-256.
**
** Record = the brokerage's detail object plus
**   "record": {"format": 1, "digest": "<64 hex>", "cap": <bytes>,
**              "bytes": <stored size>, "truncated": bool,
**              "omitted": <candidates left out of "candidates">}
**   stages[i].cut: {"rule", "code", "count"} — the reason most of the
**              candidates dropped at that stage share (absent when none)
** and, only when truncated,
**   "rejected": [{"stage", "rule", "code", "count", "example"}] — the
**              dropped candidates aggregated per (stage, rule, code), with
**              the first one's detail text as an example.
**
** The digest is SHA-256 over the detail exactly as the brokerage produced
** it (before the record block, the cut reasons and any truncation),
** serialised canonically (compact, keys sorted, reals with 17 significant
** digits). The detail holds the request fields the engine used, the
** parameters (job brokerage) and every candidate's compared numbers and
** verdict, so two decisions with the same digest saw the same inputs and
** concluded the same; a re-run of `explain` on the same inputs gives the
** same digest. It is a digest of what the engine saw, not of the message
** bytes (a pending retry has no message).
*/
#ifndef GB_DECREC_H
#define GB_DECREC_H

#include <stddef.h>

#include <jansson.h>

/* The bound of one stored record, bytes of compact JSON. */
#define DR_RECORD_MAX 65536
/* Survivors (weighted candidates) kept when a record must shrink. */
#define DR_KEEP_SURVIVORS 10
/* Job ids kept per list ("unassigned", "assignments[].jobIDs") then. */
#define DR_KEEP_IDS 100

/*
** Turn `detail` (consumed, whatever happens; NULL gives NULL) into the
** stored record text, at most `cap` bytes (cap >= 1024; larger inputs are
** shrunk in this order: dropped candidates aggregated per (stage, rule,
** code); survivors beyond DR_KEEP_SURVIVORS and job-id lists beyond
** DR_KEEP_IDS cut; finally everything but the outcome, stages, aggregates
** and record block dropped). Returns a malloc'd NUL-terminated string for
** free(), or NULL when out of memory or cap is too small.
*/
char *dr_finish(json_t *detail, size_t cap);

/*
** dr_finish with `extra` (consumed; may be NULL): keys added to the record
** after the digest is taken — what one decision maker alone knows and a
** re-run of the same inputs cannot (a pilot's claims lost to another
** worker), so that the digest still says "same inputs, same verdicts".
*/
char *dr_finish_with(json_t *detail, json_t *extra, size_t cap);

/*
** dr_finish_with that also hands back, in *kept (when `kept` is not NULL),
** a reference to the object whose dump is the text returned (the detail
** with its "record" block, shrunk as the text is; reals at full precision
** where the text has 12 digits), or NULL when it returns NULL. For a
** caller that reads the record it just made (replay counts its drops and
** assignments) without parsing the text back.
*/
char *dr_finish_keep(json_t *detail, json_t *extra, size_t cap,
		     json_t **kept);

/*
** The digest of a stored record text (its "record" block's "digest", 64
** hex) into out[65], found without parsing the record: the last
** "digest" key of the text, the record block being its last member.
** Returns 0, or GB_ENOTFOUND with out "" (NULL text, or not a record).
*/
int dr_text_digest(const char *text, char out[65]);

/*
** SHA-256 of `detail` serialised as described above, as 64 lowercase hex
** digits into out[65]. Returns 0, GB_EINVAL or GB_ENOMEM.
*/
int dr_digest(const json_t *detail, char out[65]);

#endif
