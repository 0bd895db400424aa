/*
** taskbroker.c — production task brokerage (TB-01..TB-13, FC-01..FC-07).
**
** A decision is a pipeline over the nuclei: the filters of tb_filters[] run
** in table order, each stage dropping candidates with a reason; the locality
** stage may be relaxed as a whole (TB-09); survivors are weighted (TB-10/11)
** and one is drawn with the caller's seeded generator (TB-12). When nothing
** survives the task is pending for 30 minutes (TB-13).
**
** Interpretations where the seed is silent (documented in README, tested):
** - The space check and the weight use the nucleus's tightest usable output
**   storage: non-tape, not blacklisted, smallest free+expired-expOut x RW
**   (the PanDA code checks the most constrained output endpoint). Tape and
**   blacklisted endpoints do not count as "associated storage" for TB-03.
** - "The input is on tape" (tapeWeight 0.001) holds at a nucleus when an
**   in-scope input dataset is marked onTape and the nucleus has a tape
**   endpoint, i.e. its copy would be recalled from tape.
** - taskBrokerOnMaster with no dataset marked primary uses the first one.
** - When every survivor's TB-10 weight is zero (no local input anywhere, as
**   after TB-09 or with inputPreStaging), the data factor is dropped and the
**   TB-11 weight is used, so the draw stays a draw over space and load.
** - fullChain=capable whose parent nucleus is unknown or not bare is treated
**   as a normal task (FC-04 "otherwise ignored"), so FC-05 applies to it.
*/
#include "taskbroker.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gb_error.h"

struct tb_ctx {
	const struct tb_task *task;
	const struct tb_params *p;
	const struct tb_nucleus *nuclei;
	size_t n;
	int capable_on_parent;      /* FC-04 in force: only the parent */
	const char *parent;         /* parent nucleus name when in force */
	double total_size;          /* GB over the in-scope datasets */
	double total_files;
};

/* ---- helpers --------------------------------------------------------- */

static int storage_usable(const struct tb_storage *s)
{
	return !s->tape && !s->blacklisted;
}

/* Tightest usable output storage (TB-04), or NULL when none. */
static const struct tb_storage *tightest(const struct tb_nucleus *n,
					 double out_gb, double *headroom)
{
	const struct tb_storage *best = NULL;
	double best_room = INFINITY;
	for (size_t i = 0; i < n->nstorages; i++) {
		const struct tb_storage *s = &n->storages[i];
		if (!storage_usable(s))
			continue;
		double room = s->space_free + s->space_expired - out_gb * n->rw;
		if (best == NULL || room < best_room) {
			best = s;
			best_room = room;
		}
	}
	if (headroom)
		*headroom = best_room;
	return best;
}

/* TB-05: is dataset i in the locality scope? */
static int in_scope(const struct tb_task *t, size_t i)
{
	if (!t->broker_on_master)
		return 1;
	for (size_t k = 0; k < t->ndatasets; k++)
		if (t->datasets[k].primary)
			return t->datasets[i].primary;
	return i == 0; /* no primary marked: the first dataset is the master */
}

/* Local size and files of the in-scope datasets at nucleus n. */
static void local_input(const struct tb_task *t, const struct tb_nucleus *n,
			double *size, double *files)
{
	*size = 0;
	*files = 0;
	for (size_t i = 0; i < t->ndatasets; i++) {
		const struct tb_dataset *ds = &t->datasets[i];
		if (!in_scope(t, i))
			continue;
		double sz = 0, nf = 0;
		for (size_t k = 0; k < n->nlocal; k++) {
			if (n->local[k].dataset &&
			    strcmp(n->local[k].dataset, ds->name) == 0) {
				sz += n->local[k].size;
				nf += (double)n->local[k].files;
			}
		}
		/* A replica cannot hold more than the dataset has. */
		*size += fmin(sz, ds->size);
		*files += fmin(nf, (double)ds->files);
	}
}

static int input_on_tape_at(const struct tb_task *t, const struct tb_nucleus *n)
{
	int tape_dataset = 0;
	for (size_t i = 0; i < t->ndatasets; i++)
		if (in_scope(t, i) && t->datasets[i].on_tape)
			tape_dataset = 1;
	if (!tape_dataset)
		return 0;
	for (size_t i = 0; i < n->nstorages; i++)
		if (n->storages[i].tape)
			return 1;
	return 0;
}

/* ---- filters ---------------------------------------------------------- */

/* TB-01: only ACTIVE nuclei. */
static int f_status(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		    struct dec_candidate *c)
{
	(void)ctx;
	if (n->status && strcasecmp(n->status, "ACTIVE") == 0)
		return 1;
	return dec_reject(c, "status", "TB-01", "status",
			  "status %s is not ACTIVE",
			  n->status ? n->status : "(none)", 0, 0, 0, 0);
}

/* FC-02..FC-05: full-chain placement against bareNucleus. */
static int f_full_chain(const struct tb_ctx *ctx, const struct tb_nucleus *n,
			struct dec_candidate *c)
{
	const char *bare = tb_bare_name(n->bare);
	switch (ctx->task->full_chain) {
	case TB_FC_ONLY:
		if (n->bare == TB_BARE_ONLY)
			return 1;
		return dec_reject(c, "full chain", "FC-02", "not_bare_only",
				  "fullChain=only needs bareNucleus=only, "
				  "nucleus has '%s'",
				  bare, 0, 0, 0, 0);
	case TB_FC_REQUIRE:
		if (n->bare == TB_BARE_ONLY || n->bare == TB_BARE_ALLOW)
			return 1;
		return dec_reject(c, "full chain", "FC-03", "not_bare",
				  "fullChain=require needs bareNucleus=only or "
				  "allow, nucleus has '%s'",
				  bare, 0, 0, 0, 0);
	case TB_FC_CAPABLE:
		if (ctx->capable_on_parent) {
			if (strcmp(n->name, ctx->parent) == 0)
				return 1;
			return dec_reject(c, "full chain", "FC-04",
					  "not_parent_nucleus",
					  "fullChain=capable follows the parent "
					  "task to bare nucleus %s",
					  ctx->parent, 0, 0, 0, 0);
		}
		/* FC-04: parent not on a bare nucleus -> a normal task. */
		/* fall through */
	case TB_FC_NONE:
		if (n->bare != TB_BARE_ONLY)
			return 1;
		return dec_reject(c, "full chain", "FC-05", "bare_only",
				  "bareNucleus=only accepts only full-chain "
				  "tasks",
				  NULL, 0, 0, 0, 0);
	}
	return 1;
}

/* TB-02: long transfer backlog, unless t1Weight < 0. */
static int f_backlog(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		     struct dec_candidate *c)
{
	double cap = ctx->p->nqueued_nuc_cap;
	if (ctx->task->t1_weight < 0 || !((double)n->transfer_backlog > cap))
		return 1;
	return dec_reject(c, "transfer backlog", "TB-02", "transfer_backlog",
			  "%.0f files queued > NQUEUED_NUC_CAP %.0f",
			  NULL, (double)n->transfer_backlog, cap, 0, 0);
}

/* TB-03: the nucleus needs an associated (usable output) storage. */
static int f_storage(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		     struct dec_candidate *c)
{
	(void)ctx;
	double tape = 0, black = 0;
	for (size_t i = 0; i < n->nstorages; i++) {
		if (storage_usable(&n->storages[i]))
			return 1;
		if (n->storages[i].tape)
			tape++;
		else
			black++;
	}
	if (n->nstorages == 0)
		return dec_reject(c, "storage", "TB-03", "no_storage",
				  "no associated storage", NULL, 0, 0, 0, 0);
	return dec_reject(c, "storage", "TB-03", "no_usable_storage",
			  "none of %.0f storages usable (%.0f tape, %.0f "
			  "blacklisted)",
			  NULL, (double)n->nstorages, tape, black, 0);
}

/* TB-04: free + expired - normalizedExpOutSize x RW > DISK_THRESHOLD. */
static int f_space(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		   struct dec_candidate *c)
{
	double room;
	const struct tb_storage *s =
		tightest(n, ctx->task->norm_exp_out_size, &room);
	double thr = ctx->p->disk_threshold;
	if (s == NULL || room > thr)
		return 1; /* no storage is TB-03's business */
	return dec_reject(c, "space", "TB-04", "space",
			  "%s: free+expired-expOut x RW = %.0f GB <= "
			  "DISK_THRESHOLD %.0f GB (RW %.0f)",
			  s->name, room, thr, n->rw, 0);
}

/* TB-05..TB-08: data locality of the in-scope input. */
static int f_locality(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		      struct dec_candidate *c)
{
	const struct tb_params *p = ctx->p;
	if (ctx->task->input_prestaging)
		return 1; /* TB-06: data carousel guarantees completeness */
	double lsize, lfiles;
	local_input(ctx->task, n, &lsize, &lfiles);
	int ok = 1;
	if (ctx->total_size > p->input_size_threshold) {
		double pct = 100.0 * lsize / ctx->total_size;
		if (!(pct > p->input_size_fraction))
			ok = dec_reject(c, "locality", "TB-07", "input_size",
					"local input %.1f%% of %.4g GB <= "
					"INPUT_SIZE_FRACTION %.4g%%",
					NULL, pct, ctx->total_size,
					p->input_size_fraction, 0);
	}
	if (ctx->total_files > p->input_num_threshold) {
		double pct = 100.0 * lfiles / ctx->total_files;
		if (!(pct > p->input_num_fraction))
			ok = dec_reject(c, "locality", "TB-08", "input_files",
					"local files %.1f%% of %.0f <= "
					"INPUT_NUM_FRACTION %.4g%%",
					NULL, pct, ctx->total_files,
					p->input_num_fraction, 0);
	}
	return ok;
}

/* clang-format off */
const struct tb_filter tb_filters[] = {
	{"status",           "TB-01", f_status},
	{"full chain",       "FC-05", f_full_chain},
	{"transfer backlog", "TB-02", f_backlog},
	{"storage",          "TB-03", f_storage},
	{"space",            "TB-04", f_space},
	{"locality",         "TB-07", f_locality},
	{NULL, NULL, NULL},
};
/* clang-format on */

/* ---- weights ---------------------------------------------------------- */

/*
** TB-10 (data-weighted, when ioIntensity > MIN_IO_INTENSITY_WITH_LOCAL_DATA
** and there is input) or TB-11. `with_data` = 0 forces TB-11.
*/
static double weigh(const struct tb_ctx *ctx, const struct tb_nucleus *n,
		    int with_data, struct dec_reason *expl)
{
	const struct tb_task *t = ctx->task;
	const struct tb_storage *s = tightest(n, t->norm_exp_out_size, NULL);
	double tape = input_on_tape_at(t, n) ? TB_TAPE_WEIGHT : 1.0;
	double rw = fmax(TB_RW_OFFSET, n->rw);
	double space = 0;
	if (s && s->space_total > 0)
		space = (s->space_free + s->space_expired) / s->space_total;
	memset(expl, 0, sizeof(*expl));
	expl->code = "weight";
	expl->v[1] = tape;
	expl->v[2] = space;
	expl->v[3] = rw;
	if (with_data) {
		double lsize, lfiles;
		local_input(t, n, &lsize, &lfiles);
		double data = lsize / ctx->total_size;
		expl->rule = "TB-10";
		expl->fmt = "localInput/totalInput %.4g x tapeWeight %.3g x "
			    "(free+expired)/total %.4g / max(50,RW) %.0f";
		expl->v[0] = data;
		return data * tape * space / rw;
	}
	expl->rule = "TB-11";
	expl->fmt = "tapeWeight %.3g x (free+expired)/total %.4g / "
		    "max(50,RW) %.0f";
	expl->v[0] = tape;
	expl->v[1] = space;
	expl->v[2] = rw;
	expl->v[3] = 0;
	return tape * space / rw;
}

/* ---- the pipeline ----------------------------------------------------- */

static int task_valid(const struct tb_task *t)
{
	if (!isfinite(t->io_intensity) || !isfinite(t->t1_weight) ||
	    !isfinite(t->norm_exp_out_size) || t->norm_exp_out_size < 0 ||
	    (t->ndatasets > 0 && t->datasets == NULL))
		return 0;
	for (size_t i = 0; i < t->ndatasets; i++)
		if (!isfinite(t->datasets[i].size) || t->datasets[i].size < 0 ||
		    t->datasets[i].files < 0 || t->datasets[i].name == NULL)
			return 0;
	return 1;
}

void tb_params_resolve(const struct prm_set *set, const char *gshare,
		       struct tb_params *out)
{
	out->nqueued_nuc_cap = prm_get(set, "NQUEUED_NUC_CAP");
	out->disk_threshold = prm_get_sfx(set, "DISK_THRESHOLD", gshare);
	out->input_size_threshold = prm_get(set, "INPUT_SIZE_THRESHOLD");
	out->input_size_fraction = prm_get(set, "INPUT_SIZE_FRACTION");
	out->input_num_threshold = prm_get(set, "INPUT_NUM_THRESHOLD");
	out->input_num_fraction = prm_get(set, "INPUT_NUM_FRACTION");
	out->min_io_local = prm_get(set, "MIN_IO_INTENSITY_WITH_LOCAL_DATA");
	out->min_input_size_local = prm_get(set, "MIN_INPUT_SIZE_WITH_LOCAL_DATA");
	out->max_prio_local = prm_get(set, "MAX_TASK_PRIO_WITH_LOCAL_DATA");
}

/* TB-09: may the locality check be dropped for this task? */
static int locality_relaxable(const struct tb_ctx *ctx)
{
	const struct tb_params *p = ctx->p;
	const struct tb_task *t = ctx->task;
	return (t->io_intensity <= p->min_io_local &&
		ctx->total_size <= p->min_input_size_local) ||
	       (double)t->priority >= p->max_prio_local;
}

static void setup_ctx(struct tb_ctx *ctx, const struct tb_task *task,
		      const struct tb_nucleus *nuclei, size_t n,
		      const struct tb_params *p)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->task = task;
	ctx->p = p;
	ctx->nuclei = nuclei;
	ctx->n = n;
	for (size_t i = 0; i < task->ndatasets; i++) {
		if (!in_scope(task, i))
			continue;
		ctx->total_size += task->datasets[i].size;
		ctx->total_files += (double)task->datasets[i].files;
	}
	/* FC-04: capable follows the parent only onto a bare nucleus. */
	if (task->full_chain == TB_FC_CAPABLE && task->parent_nucleus &&
	    task->parent_nucleus[0]) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(nuclei[i].name, task->parent_nucleus) == 0 &&
			    nuclei[i].bare != TB_BARE_NO) {
				ctx->capable_on_parent = 1;
				ctx->parent = nuclei[i].name;
			}
		}
	}
}

int tb_broker(const struct tb_task *task, const struct tb_nucleus *nuclei,
	      size_t nnuclei, const struct tb_params *params,
	      struct gb_rng *rng, struct dec_candidate *cands,
	      struct dec_decision *out)
{
	if (!task || !params || !rng || !out || (nnuclei && (!nuclei || !cands)))
		return GB_EINVAL;
	if (!task_valid(task))
		return GB_EINVAL;
	for (size_t i = 0; i < nnuclei; i++)
		if (nuclei[i].name == NULL || !isfinite(nuclei[i].rw))
			return GB_EINVAL;

	struct tb_ctx ctx;
	setup_ctx(&ctx, task, nuclei, nnuclei, params);
	dec_init(out, cands, nnuclei);
	for (size_t i = 0; i < nnuclei; i++)
		cands[i].name = nuclei[i].name;
	if (ctx.capable_on_parent)
		snprintf(out->note, sizeof(out->note),
			 "FC-04: parent task is on bare nucleus %s",
			 ctx.parent);

	for (const struct tb_filter *f = tb_filters; f->name; f++) {
		int in = (int)dec_alive(out);
		for (size_t i = 0; i < nnuclei; i++)
			if (!dec_dropped(&cands[i]))
				f->fn(&ctx, &nuclei[i], &cands[i]);
		int alive = (int)dec_alive(out);
		dec_stage(out, f->name, f->rule, in, alive);

		/* TB-09: nobody has the data; maybe locality does not matter. */
		if (f->fn == f_locality && in > 0 && alive == 0 &&
		    locality_relaxable(&ctx)) {
			for (size_t i = 0; i < nnuclei; i++)
				if (cands[i].stage && strcmp(cands[i].stage,
							     "locality") == 0)
					dec_restore(&cands[i]);
			dec_stage(out, "locality dropped", "TB-09", 0,
				  (int)dec_alive(out));
			snprintf(out->note, sizeof(out->note),
				 "TB-09: no nucleus has the input; locality "
				 "check dropped (ioIntensity %.4g kB/s, input "
				 "%.4g GB, priority %ld)",
				 task->io_intensity, ctx.total_size,
				 task->priority);
		}
	}

	/* TB-10/TB-11 weights. */
	int with_data = task->io_intensity > params->min_io_local &&
			ctx.total_size > 0;
	double wsum = 0;
	for (int pass = 0; pass < 2; pass++) {
		wsum = 0;
		for (size_t i = 0; i < nnuclei; i++) {
			if (dec_dropped(&cands[i]))
				continue;
			cands[i].weight = weigh(&ctx, &nuclei[i], with_data,
						&cands[i].wexpl);
			wsum += cands[i].weight;
		}
		/* Nothing left to weigh: keep whatever note explains why. */
		if (wsum > 0 || !with_data || dec_alive(out) == 0)
			break;
		with_data = 0; /* every data factor is zero: use TB-11 */
		if (out->note[0] == '\0')
			snprintf(out->note, sizeof(out->note), "TB-10: no "
				 "survivor holds input; weighted by TB-11");
	}

	/* TB-12: weighted draw among the survivors. */
	/* Dropped candidates have weight NAN, which the draw skips. */
	int alive = (int)dec_alive(out);
	long pick = -1;
	if (alive > 0)
		pick = gb_rng_weighted(rng, &cands[0].weight, nnuclei,
				       sizeof(cands[0]));
	dec_stage(out, "weighted choice", "TB-12", alive, pick >= 0 ? 1 : 0);

	if (pick >= 0) {
		out->outcome = DEC_ASSIGNED;
		out->chosen = pick;
		out->retry_after_s = 0;
	} else {
		out->outcome = DEC_PENDING; /* TB-13 */
		out->chosen = -1;
		out->retry_after_s = TB_PENDING_RETRY_S;
	}
	return GB_OK;
}

/* ---- FC-06/FC-07 and enum words -------------------------------------- */

enum tb_job_scope tb_job_scope(enum tb_fullchain fc, enum tb_bare nucleus)
{
	/* FC-06: a full-chain task placed on a bare nucleus stays there. */
	if (fc != TB_FC_NONE && nucleus != TB_BARE_NO)
		return TB_SCOPE_NUCLEUS_ONLY;
	/* FC-07: normal tasks (also on allow nuclei) and capable tasks on a
	** normal nucleus use the satellites' queues too. */
	return TB_SCOPE_SATELLITES;
}

int tb_bare_parse(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return TB_BARE_NO;
	if (strcmp(s, "only") == 0)
		return TB_BARE_ONLY;
	if (strcmp(s, "allow") == 0)
		return TB_BARE_ALLOW;
	return -1;
}

const char *tb_bare_name(enum tb_bare b)
{
	switch (b) {
	case TB_BARE_ONLY:
		return "only";
	case TB_BARE_ALLOW:
		return "allow";
	case TB_BARE_NO:
		break;
	}
	return "";
}

int tb_fullchain_parse(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return TB_FC_NONE;
	if (strcmp(s, "only") == 0)
		return TB_FC_ONLY;
	if (strcmp(s, "require") == 0)
		return TB_FC_REQUIRE;
	if (strcmp(s, "capable") == 0)
		return TB_FC_CAPABLE;
	return -1;
}

const char *tb_fullchain_name(enum tb_fullchain f)
{
	switch (f) {
	case TB_FC_ONLY:
		return "only";
	case TB_FC_REQUIRE:
		return "require";
	case TB_FC_CAPABLE:
		return "capable";
	case TB_FC_NONE:
		break;
	}
	return NULL;
}

const char *tb_job_scope_name(enum tb_job_scope s)
{
	return s == TB_SCOPE_NUCLEUS_ONLY ? "nucleus-only" : "satellites";
}
