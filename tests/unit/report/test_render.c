/*
** test_render.c — the text of decision records (render.c) and the
** record's size bound (decrec.c): exact text per kind, table-driven, for
** `why` heads and `explain` heads. The records are written as the
** brokerages write them (candidates, stages, throttle, TQ-10 counts,
** timeout verdicts), some in the shape of older records (no nJobs, no
** assignment counts, no pilot resource), which must still print.
*/
#include "gbtest.h"

#include <stdlib.h>
#include <string.h>

#include "report/decrec.h"
#include "gb_error.h"
#include "report/render.h"

/* 2024-05-14T08:30:00Z */
#define T0 1715675400LL

/* A PJ-15 memory cut of 120 -> 80, the summary line of the issue. */
static const char STAGE_MEM[] =
	"{\"name\":\"memory\",\"rule\":\"PJ-15\",\"in\":120,\"out\":80,"
	"\"cut\":{\"rule\":\"PJ-15\",\"code\":\"highmemory\",\"count\":31}}";

static void test_stage_line(void **state)
{
	(void)state;
	static const struct {
		const char *stage, *want;
	} cases[] = {
		{STAGE_MEM, "  120 ->  80 candidates,  33% cut : memory "
			    "[PJ-15 highmemory x31]"},
		/* nothing cut: no bracket, even with a cut object */
		{"{\"name\":\"status\",\"rule\":\"TB-01\",\"in\":5,\"out\":5}",
		 "    5 ->   5 candidates,   0% cut : status"},
		{"{\"name\":\"space\",\"in\":3,\"out\":0}",
		 "    3 ->   0 candidates, 100% cut : space"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *s = json_loads(cases[i].stage, 0, NULL);
		char buf[256];
		assert_true(rn_stage_line(s, buf, sizeof(buf)) > 0);
		assert_string_equal(buf, cases[i].want);
		json_decref(s);
	}
	char buf[64];
	json_t *s = json_loads("{\"in\":1}", 0, NULL);
	assert_int_equal(rn_stage_line(s, buf, sizeof(buf)), GB_EINVAL);
	json_decref(s);
}

/* A pending task: two nuclei dropped at two stages (TB-01, TB-04). */
static const char TASK_PENDING[] =
	"{\"decision\":\"pending\",\"nucleus\":null,\"retryAfter\":1800,"
	"\"note\":null,\"candidates\":["
	"{\"name\":\"NUC-A\",\"weight\":null,\"stage\":\"status\",\"reasons\":"
	"[{\"rule\":\"TB-01\",\"code\":\"status\",\"detail\":\"status OFFLINE "
	"is not ACTIVE\"}],\"weightDetail\":null},"
	"{\"name\":\"NUC-BB\",\"weight\":null,\"stage\":\"space\",\"reasons\":"
	"[{\"rule\":\"TB-04\",\"code\":\"space\",\"detail\":\"free 90 GB <= "
	"DISK_THRESHOLD 100 GB\"}],\"weightDetail\":null}],"
	"\"stages\":[{\"name\":\"status\",\"rule\":\"TB-01\",\"in\":2,\"out\":1},"
	"{\"name\":\"space\",\"rule\":\"TB-04\",\"in\":1,\"out\":0}]}";

/* An assigned task: one survivor chosen, one not; a note. */
static const char TASK_ASSIGNED[] =
	"{\"decision\":\"assigned\",\"nucleus\":\"CERN\",\"note\":\"hand-made\","
	"\"candidates\":["
	"{\"name\":\"CERN\",\"weight\":0.25,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":{\"rule\":\"TB-11\",\"code\":\"weight\",\"detail\":"
	"\"free/total 0.5 / RW 2\"}},"
	"{\"name\":\"BNL\",\"weight\":0.125,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":null}],"
	"\"stages\":[{\"name\":\"weighted choice\",\"rule\":\"TB-12\",\"in\":2,"
	"\"out\":1}]}";

/* A job brokerage: two best queues, one dropped with more reasons than
** kept, one dropped by a cap after it was weighed, one at a stage the
** record does not list; seven jobs on one queue (six activated, five IDs
** shown, and one assigned), one on the other, one unassigned. */
static const char JOBS_ASSIGNED[] =
	"{\"taskID\":7,\"nucleus\":\"NUC\",\"gshare\":\"MC Simul\","
	"\"decision\":\"assigned\",\"note\":null,\"nJobs\":9,\"nQueues\":5,"
	"\"best\":[\"Q-A\",\"Q-B\"],\"assignments\":["
	"{\"queue\":\"Q-A\",\"weight\":2.5,\"status\":\"activated\","
	"\"count\":6,\"jobIDs\":[11,12,13,14,15,16]},"
	"{\"queue\":\"Q-A\",\"weight\":2.5,\"status\":\"assigned\","
	"\"count\":1,\"jobIDs\":[19]},"
	"{\"queue\":\"Q-B\",\"weight\":1.25,\"status\":\"assigned\","
	"\"count\":1,\"jobIDs\":[17]}],\"unassigned\":[18],"
	"\"candidates\":["
	"{\"name\":\"Q-A\",\"weight\":2.5,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":{\"rule\":\"PJ-30\",\"code\":\"weight\",\"detail\":"
	"\"w 2.5\"}},"
	"{\"name\":\"Q-LONG-NAME\",\"weight\":null,\"stage\":\"status\","
	"\"reasons\":[{\"rule\":\"PJ-04\",\"code\":\"status\",\"detail\":"
	"\"status offline is not online\"},{\"rule\":\"PJ-04\",\"code\":"
	"\"again\",\"detail\":\"second reason\"}],\"moreReasons\":2,"
	"\"weightDetail\":null},"
	"{\"name\":\"Q-B\",\"weight\":1.25,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":{\"rule\":\"PJ-30\",\"code\":\"weight\",\"detail\":"
	"\"w 1.25\"}},"
	"{\"name\":\"Q-C\",\"weight\":null,\"stage\":\"queue cap\",\"reasons\":"
	"[{\"rule\":\"PJ-33\",\"code\":\"cap\",\"detail\":\"65 > cap 20\"}],"
	"\"weightDetail\":{\"rule\":\"PJ-30\",\"code\":\"weight\",\"detail\":"
	"\"w 0.5\"}},"
	"{\"name\":\"Q-D\",\"weight\":null,\"stage\":\"gone\",\"reasons\":[],"
	"\"weightDetail\":null}],"
	"\"stages\":[{\"name\":\"status\",\"rule\":\"PJ-04\",\"in\":5,\"out\":4,"
	"\"cut\":{\"rule\":\"PJ-04\",\"code\":\"status\",\"count\":1}},"
	"{\"name\":\"queue cap\",\"rule\":\"PJ-33\",\"in\":3,\"out\":2}]}";

static const char JOBS_ASSIGNED_TEXT[] =
	"job brokerage: task 7, gshare MC Simul, nucleus NUC, 9 jobs, 5 "
	"queues\n"
	"stages:\n"
	"    5 ->   4 candidates,  20% cut : status [PJ-04 status x1]\n"
	"    3 ->   2 candidates,  33% cut : queue cap\n"
	"    QUEUE       WEIGHT     RULE   CODE               DETAIL\n"
	"*1  Q-A         2.5        PJ-30  weight             w 2.5\n"
	"*2  Q-B         1.25       PJ-30  weight             w 1.25\n"
	"-- dropped at status (PJ-04): 1 queue --\n"
	"    Q-LONG-NAME -          PJ-04  status             status offline "
	"is not online\n"
	"                           PJ-04  again              second reason\n"
	"                           (+2 more reasons)\n"
	"-- dropped at queue cap (PJ-33): 1 queue --\n"
	"    Q-C         -          PJ-33  cap                65 > cap 20\n"
	"                weighed    PJ-30  weight             w 0.5\n"
	"-- dropped at other stages: 1 queue --\n"
	"    Q-D         -          (no reason recorded)\n"
	"jobs per queue:\n"
	"  Q-A         activated     6 jobs: 11, 12, 13, 14, 15, ... (+1)\n"
	"  Q-A         assigned      1 job : 19\n"
	"  Q-B         assigned      1 job : 17\n"
	"unassigned: 1 job: 18\n"
	"decision: assigned 8 of 9 jobs to 2 queues, best Q-A (weight 2.5)\n";

/* A throttled analysis task, as records were before nJobs (no
** candidates, no stages; the jobs counted from "unassigned"). */
static const char ANAL_THROTTLED[] =
	"{\"taskID\":7,\"gshare\":\"User Analysis\",\"user\":\"bob\","
	"\"workingGroup\":null,\"taskClass\":\"C\",\"decision\":\"throttled\","
	"\"retryAfter\":1200,\"throttle\":{\"throttled\":true,\"rule\":"
	"\"AJ-04\",\"code\":\"share_class_c\",\"value\":93,\"limit\":90},"
	"\"owner\":{\"countsOf\":\"user\",\"runningJobs\":400,\"queuedJobs\":"
	"150,\"runningCores\":800,\"queuedCores\":300,\"quotaExceeded\":false,"
	"\"userAnalysis\":true,\"shareUsage\":930,\"shareTarget\":1000,"
	"\"sharePercent\":93,\"hiSiteSlots\":50},\"localityDropped\":false,"
	"\"note\":null,\"best\":[],\"assignments\":[],\"unassigned\":[701,702],"
	"\"candidates\":[],\"stages\":[]}";

static const char ANAL_THROTTLED_TEXT[] =
	"analysis brokerage: task 7 of bob, gshare User Analysis, class C, 2 "
	"jobs, 0 queues\n"
	"-- throttle (AJ-01..AJ-04), counts of user bob --\n"
	"  running 400 jobs, 800 cores; queued 150 jobs, 300 cores; disk "
	"quota ok\n"
	"  User Analysis share: usage 930 of target 1000 (93 %), hi-site "
	"slots 50\n"
	"  THROTTLED by AJ-04 (share_class_c): 93 > limit 90\n"
	"unassigned: 2 jobs: 701, 702\n"
	"decision: throttled, no queue looked at; 2 jobs wait, retried after "
	"1200 s\n";

/* An analysis task brokered after AJ-28's second pass, counted for its
** working group, outside User Analysis. */
static const char ANAL_ASSIGNED[] =
	"{\"taskID\":8,\"gshare\":\"Group\",\"user\":\"carol\","
	"\"workingGroup\":\"phys-higgs\",\"taskClass\":\"A\","
	"\"decision\":\"assigned\",\"throttle\":{\"throttled\":false,"
	"\"rule\":null,\"code\":null,\"value\":null,\"limit\":null},"
	"\"owner\":{\"countsOf\":\"workingGroup\",\"runningJobs\":10,"
	"\"queuedJobs\":5,\"runningCores\":10,\"queuedCores\":5,"
	"\"quotaExceeded\":true,\"userAnalysis\":false,\"shareUsage\":null,"
	"\"shareTarget\":null,\"sharePercent\":null,\"hiSiteSlots\":0},"
	"\"localityDropped\":true,\"note\":\"AJ-28: retried\",\"nJobs\":1,"
	"\"nQueues\":1,\"best\":[\"ANALY_X\"],\"assignments\":[{\"queue\":"
	"\"ANALY_X\",\"weight\":3.66315789474,\"status\":\"assigned\","
	"\"count\":1,\"jobIDs\":[81]}],\"unassigned\":[],\"candidates\":["
	"{\"name\":\"ANALY_X\",\"weight\":3.66315789474,\"stage\":null,"
	"\"reasons\":[],\"weightDetail\":{\"rule\":\"AJ-25\",\"code\":"
	"\"weight\",\"detail\":\"W_s 6 x W_q 0.6105 = 3.663\"},\"type\":"
	"\"analysis\"}],\"stages\":[{\"name\":\"memory\",\"rule\":\"AJ-13\","
	"\"in\":1,\"out\":1}]}";

static const char ANAL_ASSIGNED_TEXT[] =
	"analysis brokerage: task 8 of carol, gshare Group, class A, 1 job, 1 "
	"queue\n"
	"-- throttle (AJ-01..AJ-04), counts of working group phys-higgs --\n"
	"  running 10 jobs, 10 cores; queued 5 jobs, 5 cores; disk quota "
	"EXCEEDED\n"
	"  share Group: not User Analysis, AJ-04 does not apply\n"
	"  not throttled\n"
	"stages:\n"
	"    1 ->   1 candidates,   0% cut : memory\n"
	"    QUEUE   WEIGHT     RULE   CODE               DETAIL\n"
	"*1  ANALY_X 3.663      AJ-25  weight             W_s 6 x W_q 0.6105 "
	"= 3.663\n"
	"jobs per queue:\n"
	"  ANALY_X assigned      1 job : 81\n"
	"unassigned: 0 jobs\n"
	"AJ-28: second pass without the locality check (AJ-08) after the "
	"first left no queue\n"
	"note: AJ-28: retried\n"
	"decision: assigned 1 of 1 jobs to 1 queue, best ANALY_X (weight "
	"3.663)\n";

/* A pilot nothing matched, as records were before "resource". */
static const char PILOT_NOMATCH[] =
	"{\"decision\":\"nomatch\",\"code\":\"no_tq_matched\",\"reason\":"
	"\"no task queue matched: 4 considered; setup excluded 4\","
	"\"tq\":null,\"job\":null,\"considered\":4,\"matched\":0,\"empty\":0,"
	"\"stages\":[{\"name\":\"setup\",\"rule\":\"TQ-05\",\"in\":4,\"out\":0,"
	"\"cut\":{\"rule\":\"TQ-05\",\"code\":\"setup\",\"count\":4}}]}";

/* A private pilot with JOB_SHARING matched in a lottery; two of its picks
** were claimed by another worker first. */
static const char PILOT_MATCHED[] =
	"{\"decision\":\"matched\",\"code\":\"matched\",\"reason\":\"matched: "
	"3 task queues, 2 at cpu_time 50000 in the lottery\",\"pilot\":\"p-2\","
	"\"site\":\"LCG.CERN.cern\",\"resource\":{\"setup\":\"Prod\","
	"\"cpuTime\":86400,\"gridCE\":null,\"platform\":\"el9\",\"pilotType\":"
	"null,\"ownerGroup\":\"lhcb_mc\",\"ownerDN\":\"/DC=ch/CN=lbpilot\","
	"\"jobSharing\":true},\"tq\":11,\"job\":1101,\"userPriority\":3,"
	"\"tqOwnerDN\":\"/DC=ch/CN=alice\",\"tqOwnerGroup\":\"lhcb_mc\","
	"\"tqCpuTime\":50000,\"considered\":3,\"matched\":3,\"empty\":0,"
	"\"entrants\":2,\"topCpuTime\":50000,\"lotteryTotal\":2391.30434783,"
	"\"rejectedBy\":{},\"stages\":[],\"lostClaims\":2}";

static const char PILOT_MATCHED_TEXT[] =
	"pilot match: pilot p-2 at LCG.CERN.cern, setup Prod, cpuTime 86400 "
	"s, private to lhcb_mc (JOB_SHARING) / lbpilot, 3 task queues\n"
	"  grid CE any, platform el9, pilot type any, job type any\n"
	"task queues: 3 considered, 3 matched, 0 of them empty\n"
	"lottery (TQ-07): 2 at cpu_time 50000, total priority 2391.3\n"
	"TQ-10 matched: matched: 3 task queues, 2 at cpu_time 50000 in the "
	"lottery\n"
	"lost claims: 2 picked jobs were taken by another worker first\n"
	"decision: matched job 1101 from task queue 11: UserPriority 3, CPU "
	"time 50000 s, owner /DC=ch/CN=alice, group lhcb_mc\n";

/* A timeout (TO-07) and a fast rebrokerage (TO-13, no limit compared). */
static const char TIMEOUT_SENT[] =
	"{\"jobID\":901,\"taskID\":9,\"queue\":\"CERN-PROD_UCORE\",\"gshare\":"
	"\"MC Simul\",\"status\":\"sent\",\"rule\":\"TO-07\",\"what\":\"sent "
	"without pilot reply for\",\"age\":1860.0,\"limit\":1800.0,\"action\":"
	"\"fail\",\"decision\":\"fail\"}";

static const char REBRO[] =
	"{\"jobID\":902,\"taskID\":9,\"queue\":null,\"gshare\":\"\",\"status\":"
	"\"activated\",\"rule\":\"TO-13\",\"what\":\"fast rebrokerage: queued "
	"jobs over the limits\",\"age\":7200.0,\"limit\":0.0,\"action\":"
	"\"reassign\",\"fastRebro\":{\"nQueue\":900.0,\"nRun\":200.0,"
	"\"nQueueTotal\":1500.0,\"ratioLimit\":600.0,\"fracLimit\":450.0,"
	"\"nQueueLimit\":null,\"excess\":1},\"decision\":\"reassign\"}";

static void check_render(const struct rn_head *h, const char *json,
			 const char *want)
{
	json_t *d = json ? json_loads(json, 0, NULL) : NULL;
	assert_true(json == NULL || d != NULL);
	char *got = rn_render(h, d);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	json_decref(d);
}

/* The same record with the `why` head of a stored row and with the
** `explain` head: only the first line differs. */
static void check_both(const char *kind, const char *json,
		       const char *why_head, const char *explain_head,
		       const char *body)
{
	char want[4096];
	const struct rn_head why = {kind, "7", "assigned", "Q-A", 3, "r-3",
				    T0, 0};
	snprintf(want, sizeof(want), "%s%s", why_head, body);
	check_render(&why, json, want);
	const struct rn_head off = {kind, "7", "assigned", "Q-A", 0, NULL, 0,
				    0};
	snprintf(want, sizeof(want), "%s%s", explain_head, body);
	check_render(&off, json, want);
}

static void test_render_kinds(void **state)
{
	(void)state;
	static const struct {
		struct rn_head h;
		const char *json, *want;
	} cases[] = {
		{{"task", "42", "pending", NULL, 1, "r-1", T0, 0}, TASK_PENDING,
		 "task 42: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-1, digest -, decision 1\n"
		 "task brokerage over 2 nuclei\n"
		 "stages:\n"
		 "    2 ->   1 candidates,  50% cut : status\n"
		 "    1 ->   0 candidates, 100% cut : space\n"
		 "    NUCLEUS WEIGHT     RULE   CODE               DETAIL\n"
		 "-- dropped at status (TB-01): 1 nucleus --\n"
		 "    NUC-A   -          TB-01  status             status "
		 "OFFLINE is not ACTIVE\n"
		 "-- dropped at space (TB-04): 1 nucleus --\n"
		 "    NUC-BB  -          TB-04  space              free 90 GB "
		 "<= DISK_THRESHOLD 100 GB\n"
		 "decision: pending, retry after 1800 s\n"},
		{{"task", "43", "assigned", "CERN", 0, NULL, 0, 0},
		 TASK_ASSIGNED,
		 "task 43: assigned, chosen CERN, digest -, offline run\n"
		 "task brokerage over 2 nuclei\n"
		 "stages:\n"
		 "    2 ->   1 candidates,  50% cut : weighted choice\n"
		 "    NUCLEUS WEIGHT     RULE   CODE               DETAIL\n"
		 "*   CERN    0.25       TB-11  weight             free/total "
		 "0.5 / RW 2\n"
		 "    BNL     0.125\n"
		 "note: hand-made\n"
		 "decision: assigned to CERN (weight 0.25)\n"},
		{{"jobs", "7", "pending", NULL, 3, "r-3", T0, 701},
		 ANAL_THROTTLED,
		 "jobs 7: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-3, digest -, decision 3; job 701: unassigned\n"
		 "analysis brokerage: task 7 of bob, gshare User Analysis, "
		 "class C, 2 jobs, 0 queues\n"
		 "-- throttle (AJ-01..AJ-04), counts of user bob --\n"
		 "  running 400 jobs, 800 cores; queued 150 jobs, 300 cores; "
		 "disk quota ok\n"
		 "  User Analysis share: usage 930 of target 1000 (93 %), "
		 "hi-site slots 50\n"
		 "  THROTTLED by AJ-04 (share_class_c): 93 > limit 90\n"
		 "unassigned: 2 jobs: 701, 702\n"
		 "decision: throttled, no queue looked at; 2 jobs wait, "
		 "retried after 1200 s\n"},
		{{"pilot", "p-1", "nomatch", NULL, 0, NULL, 0, 0}, PILOT_NOMATCH,
		 "pilot p-1: nomatch, chosen -, digest -, offline run\n"
		 "task queues: 4 considered, 0 matched, 0 of them empty\n"
		 "TQ-10 no_tq_matched: no task queue matched: 4 considered; "
		 "setup excluded 4\n"
		 "stages:\n"
		 "    4 ->   0 candidates, 100% cut : setup [TQ-05 setup x4]\n"
		 "decision: nomatch, no job for this pilot\n"},
		{{"pilot", "p-2", "matched", "job 1101 (TQ 11)", 4, "m-2", T0,
		  0},
		 PILOT_MATCHED,
		 "pilot p-2: matched, chosen job 1101 (TQ 11), at "
		 "2024-05-14T08:30:00Z, request m-2, digest -, decision 4\n"
		 "pilot match: pilot p-2 at LCG.CERN.cern, setup Prod, cpuTime "
		 "86400 s, private to lhcb_mc (JOB_SHARING) / lbpilot, 3 task "
		 "queues\n"
		 "  grid CE any, platform el9, pilot type any, job type any\n"
		 "task queues: 3 considered, 3 matched, 0 of them empty\n"
		 "lottery (TQ-07): 2 at cpu_time 50000, total priority 2391.3\n"
		 "TQ-10 matched: matched: 3 task queues, 2 at cpu_time 50000 "
		 "in the lottery\n"
		 "lost claims: 2 picked jobs were taken by another worker "
		 "first\n"
		 "decision: matched job 1101 from task queue 11: UserPriority "
		 "3, CPU time 50000 s, owner /DC=ch/CN=alice, group lhcb_mc\n"},
		{{"timeout", "901", "fail", "failed", 5, "gb-timeout-901", T0, 0},
		 TIMEOUT_SENT,
		 "timeout 901: fail, chosen failed, at 2024-05-14T08:30:00Z, "
		 "request gb-timeout-901, digest -, decision 5\n"
		 "job 901 of task 9 at CERN-PROD_UCORE, status sent, gshare MC "
		 "Simul\n"
		 "rule: TO-07: sent without pilot reply for 1860 s (31 min) > "
		 "limit 1800 s (30 min)\n"
		 "decision: fail\n"},
		{{"rebro", "902", "reassign", NULL, 6, NULL, T0, 0}, REBRO,
		 "rebro 902: reassign, chosen -, at 2024-05-14T08:30:00Z, "
		 "request -, digest -, decision 6\n"
		 "job 902 of task 9 at no queue, status activated\n"
		 "rule: TO-13: fast rebrokerage: queued jobs over the limits "
		 "(age 7200 s (2 h))\n"
		 "fast rebrokerage (TO-13): nQueue 900, nRun 200, total 1500: "
		 "rebroker 1 job (ratio limit 600, frac limit 450, nQueue "
		 "limit unset)\n"
		 "decision: reassign\n"},
		/* a row without a readable record, and an empty one */
		{{"task", "44", "pending", NULL, 5, NULL, T0, 0}, NULL,
		 "task 44: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "-, digest -, decision 5\n"
		 "(no readable record stored with this decision)\n"},
		{{"task", "45", "pending", NULL, 0, NULL, 0, 0}, "{}",
		 "task 45: pending, chosen -, digest -, offline run\n"
		 "(no readable record stored with this decision)\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_render(&cases[i].h, cases[i].json, cases[i].want);

	check_both("jobs", JOBS_ASSIGNED,
		   "jobs 7: assigned, chosen Q-A, at 2024-05-14T08:30:00Z, "
		   "request r-3, digest -, decision 3\n",
		   "jobs 7: assigned, chosen Q-A, digest -, offline run\n",
		   JOBS_ASSIGNED_TEXT);
	check_both("analysis", ANAL_THROTTLED,
		   "analysis 7: assigned, chosen Q-A, at "
		   "2024-05-14T08:30:00Z, request r-3, digest -, decision 3\n",
		   "analysis 7: assigned, chosen Q-A, digest -, offline run\n",
		   ANAL_THROTTLED_TEXT);
	check_both("analysis", ANAL_ASSIGNED,
		   "analysis 7: assigned, chosen Q-A, at "
		   "2024-05-14T08:30:00Z, request r-3, digest -, decision 3\n",
		   "analysis 7: assigned, chosen Q-A, digest -, offline run\n",
		   ANAL_ASSIGNED_TEXT);
	check_both("pilot", PILOT_MATCHED,
		   "pilot 7: assigned, chosen Q-A, at 2024-05-14T08:30:00Z, "
		   "request r-3, digest -, decision 3\n",
		   "pilot 7: assigned, chosen Q-A, digest -, offline run\n",
		   PILOT_MATCHED_TEXT);
}

/* `why job`: the head says where the job asked about went. */
static void test_focus(void **state)
{
	(void)state;
	json_t *d = json_loads(JOBS_ASSIGNED, 0, NULL);
	assert_non_null(d);
	static const struct {
		long long job;
		const char *want;
	} cases[] = {
		{17, "; job 17: Q-B assigned\n"},
		{19, "; job 19: Q-A assigned\n"},
		{13, "; job 13: Q-A activated\n"},
		{18, "; job 18: unassigned\n"},
		{99, "decision 3\n"}, /* not in this decision: nothing */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rn_head h = {"jobs", "7", "assigned", "Q-A", 3,
					  "r-3", T0, cases[i].job};
		char *got = rn_render(&h, d);
		assert_non_null(got);
		char *nl = strchr(got, '\n');
		assert_non_null(nl);
		size_t w = strlen(cases[i].want);
		assert_true((size_t)(nl + 1 - got) >= w);
		assert_memory_equal(nl + 1 - w, cases[i].want, w);
		assert_string_equal(nl + 1, JOBS_ASSIGNED_TEXT);
		free(got);
	}
	json_decref(d);
}

/* A stored record's "bytes" is its own length, and the text is what a
** dump of it writes (the size member is spliced in, decrec.c). */
static void assert_record_bytes(const char *text)
{
	json_t *r = json_loads(text, 0, NULL);
	assert_non_null(r);
	json_t *rec = json_object_get(r, "record");
	assert_int_equal(json_integer_value(json_object_get(rec, "bytes")),
			 (json_int_t)strlen(text));
	char *again = json_dumps(r, JSON_COMPACT | JSON_REAL_PRECISION(12));
	assert_string_equal(again, text);
	free(again);
	json_decref(r);
}

/* dr_finish: digest, stage cuts, and a bound that truncates the list into
** per-rule aggregates, which the text then shows. */
static void test_record_bound(void **state)
{
	(void)state;
	/* 200 nuclei dropped by TB-04 with long details: ~40 KB. */
	json_t *d = json_loads(TASK_PENDING, 0, NULL);
	json_t *cands = json_object_get(d, "candidates");
	json_array_clear(cands);
	char name[32], detail[200];
	memset(detail, 'x', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "NUC-%03d", i);
		json_array_append_new(
			cands, json_pack("{s:s,s:n,s:s,s:[{s:s,s:s,s:s}]}",
					 "name", name, "weight", "stage",
					 "space", "reasons", "rule", "TB-04",
					 "code", "space", "detail", detail));
	}
	json_t *st = json_object_get(d, "stages");
	json_array_clear(st);
	json_array_append_new(st, json_pack("{s:s,s:s,s:i,s:i}", "name",
					    "space", "rule", "TB-04", "in", 200,
					    "out", 0));
	char want_digest[65];
	assert_int_equal(dr_digest(d, want_digest), GB_OK);

	/* Under a 64 KiB cap the record is whole, with its cut. */
	char *whole = dr_finish(json_deep_copy(d), DR_RECORD_MAX);
	assert_non_null(whole);
	assert_true(strlen(whole) <= DR_RECORD_MAX);
	assert_non_null(strstr(whole, "\"truncated\":false"));
	assert_non_null(strstr(whole, "\"cut\":{\"rule\":\"TB-04\","
				      "\"code\":\"space\",\"count\":200}"));
	assert_record_bytes(whole);
	free(whole);

	/* A detail that has "record" before its other members takes the
	** slow path (dump again); the size is still exact. */
	json_t *early = json_pack("{s:{}}", "record");
	json_t *copy = json_deep_copy(d);
	json_object_update(early, copy);
	json_decref(copy);
	char *slow = dr_finish(early, DR_RECORD_MAX);
	assert_non_null(slow);
	assert_true(strncmp(slow, "{\"record\":", 10) == 0);
	assert_record_bytes(slow);
	free(slow);

	/* Under 8 KiB the candidates become one aggregate. */
	char *small = dr_finish(d, 8192);
	assert_non_null(small);
	assert_true(strlen(small) <= 8192);
	assert_record_bytes(small);
	json_t *r = json_loads(small, 0, NULL);
	free(small);
	assert_non_null(r);
	json_t *rec = json_object_get(r, "record");
	assert_string_equal(json_string_value(json_object_get(rec, "digest")),
			    want_digest);
	assert_true(json_is_true(json_object_get(rec, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(rec, "omitted")),
			 200);
	assert_int_equal(json_array_size(json_object_get(r, "candidates")), 0);

	struct rn_head h = {"task", "45", "pending", NULL, 9, "r-9", T0, 0};
	char *got = rn_render(&h, r);
	char want[1024];
	snprintf(want, sizeof(want),
		 "task 45: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-9, digest %.16s, decision 9\n"
		 "task brokerage over 200 nuclei\n"
		 "stages:\n"
		 "  200 ->   0 candidates, 100%% cut : space [TB-04 space x200]\n"
		 "rejected, per rule (nuclei not listed):\n"
		 "  space        TB-04  space                 200  e.g. "
		 "NUC-000: %s\n"
		 "decision: pending, retry after 1800 s\n"
		 "record truncated at 8192 bytes: 200 nuclei not listed one "
		 "by one\n",
		 want_digest, detail);
	assert_string_equal(got, want);
	free(got);
	json_decref(r);

	/* Digest: key order does not matter, a number does. */
	json_t *a = json_loads("{\"a\":1,\"b\":2.5}", 0, NULL);
	json_t *b = json_loads("{\"b\":2.5,\"a\":1}", 0, NULL);
	json_t *c = json_loads("{\"b\":2.5,\"a\":2}", 0, NULL);
	char da[65], db[65], dc[65];
	assert_int_equal(dr_digest(a, da), GB_OK);
	assert_int_equal(dr_digest(b, db), GB_OK);
	assert_int_equal(dr_digest(c, dc), GB_OK);
	assert_string_equal(da, db);
	assert_string_not_equal(da, dc);
	assert_int_equal(strlen(da), 64);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	assert_null(dr_finish(NULL, DR_RECORD_MAX));
	assert_null(dr_finish(json_object(), 100)); /* cap too small */
}

/* A jobs record cut to DR_KEEP_IDS IDs per list still counts every job:
** nJobs and each assignment's count. */
static void test_truncated_ids(void **state)
{
	(void)state;
	json_t *d = json_loads(JOBS_ASSIGNED, 0, NULL);
	json_t *as = json_array_get(json_object_get(d, "assignments"), 0);
	json_t *ids = json_object_get(as, "jobIDs");
	json_array_clear(ids);
	json_array_append_new(ids, json_integer(11));
	json_object_set_new(as, "count", json_integer(250));
	json_object_set_new(d, "nJobs", json_integer(253));
	json_object_set_new(d, "jobIDsOmitted", json_integer(249));
	const struct rn_head h = {"jobs", "7", "assigned", "Q-A", 0, NULL, 0,
				  0};
	char *got = rn_render(&h, d);
	assert_non_null(got);
	static const char *const want[] = {
		", 253 jobs, 5 queues\n",
		"  Q-A         activated   250 jobs: 11, ... (+249)\n",
		"unassigned: 1 job: 18\n",
		"decision: assigned 252 of 253 jobs to 2 queues,",
		"record truncated: 249 job IDs not kept\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(got, want[i]) == NULL)
			fail_msg("missing '%s' in:\n%s", want[i], got);
	free(got);
	json_decref(d);
}

static void test_json(void **state)
{
	(void)state;
	struct rn_head h = {"pilot", "p-1", "matched", "job 5 (TQ 2)", 7, "m-1",
			    T0, 0};
	json_t *o = rn_json(&h, NULL);
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"chosen\":\"job 5 (TQ 2)\",\"decidedAt\":"
			       "\"2024-05-14T08:30:00Z\",\"decision\":7,"
			       "\"kind\":\"pilot\",\"outcome\":\"matched\","
			       "\"record\":null,\"requestId\":\"m-1\","
			       "\"subject\":\"p-1\"}");
	free(s);
	json_decref(o);
	assert_string_equal(rn_short_dn("/DC=ch/CN=x/CN=alice"), "alice");
	assert_string_equal(rn_short_dn("/DC=ch/CN="), "/DC=ch/CN=");
	assert_string_equal(rn_short_dn("plain"), "plain");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_line),
		cmocka_unit_test(test_render_kinds),
		cmocka_unit_test(test_focus),
		cmocka_unit_test(test_record_bound),
		cmocka_unit_test(test_truncated_ids),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
