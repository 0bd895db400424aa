/*
** test_swcheck.c — RC-02..RC-07 with the seed's AGLT2 dictionary.
**
** The AGLT2 dictionary of the seed is copied verbatim below; the variants
** change one list each so that every rule is reached on its own (AGLT2
** publishes 'any' containers, which alone satisfies RC-05 and the second
** half of RC-06). The job-brokerage seed's AGLT2 publishes no
** architectures, the brokerage seed's adds the exclusive intel cpu and
** nvidia gpu dictionaries: only the RC-03 cases use that one (V_AGLT2_HW),
** since its 'excl' lists refuse every task not asking intel and nvidia. Each case checks the verdict and, for a reject, the rule
** ID, reason code, the string argument and the first compared number.
*/
#include "gbtest.h"

#include "decision.h"
#include "gb_error.h"
#include "swcheck.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- RC-01: the seed's AGLT2 dictionary -------------------------------- */

static const char *const aglt2_cmtconfigs[] = {
	"x86_64-centos7-gcc62-opt", "x86_64-centos7-gcc8-opt",
	"x86_64-slc6-gcc49-opt",    "x86_64-slc6-gcc62-opt",
	"x86_64-slc6-gcc8-opt",
};
static const char *const aglt2_containers[] = {"any", "/cvmfs"};
static const char *const aglt2_cvmfs[] = {"atlas", "nightlies"};
static const char *const cpu_arch[] = {"x86_64"};
static const char *const cpu_instr[] = {"avx2"};
static const char *const cpu_vendor[] = {"intel", "excl"};
static const char *const gpu_vendor[] = {"nvidia", "excl"};
static const char *const gpu_model[] = {"kt100"};
static const struct rc_hw aglt2_cpu = {
	cpu_arch, N(cpu_arch), cpu_vendor, N(cpu_vendor),
	cpu_instr, N(cpu_instr), NULL, 0,
};
static const struct rc_hw aglt2_gpu = {
	NULL, 0, gpu_vendor, N(gpu_vendor), NULL, 0, gpu_model, N(gpu_model),
};
static const struct rc_tag aglt2_tags[] = {
	{"x86_64-slc6-gcc62-opt", "", "AthDerivation", "21.2.2.0", NULL, 0},
	{"x86_64-slc6-gcc62-opt", "", "Athena", "21.0.38", NULL, 0},
};

/* ---- variants ------------------------------------------------------------ */

/* Containers by prefix only (RC-05), and the "ALL" queue that resolves a
** container name to its source path. */
static const char *const pfx_containers[] = {
	"docker://atlas/", "/cvmfs/unpacked.cern.ch/",
};
static const char *const all_src_athena[] = {
	"/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athena:21.0.38",
};
static const char *const all_src_other[] = {
	"/srv/images/atlas/other:1.0",
};
static const struct rc_tag all_tags[] = {
	{"x86_64-centos7-gcc8-opt", "atlas/athena:21.0.38", "Athena",
	 "21.0.38", all_src_athena, N(all_src_athena)},
	{"x86_64-centos7-gcc8-opt", "atlas/other:1.0", "Athena", "22.0.1",
	 all_src_other, N(all_src_other)},
};
static const struct rc_sw all_queue = {
	.tags = all_tags, .ntags = N(all_tags),
};

/* Fat-container tags (RC-04). */
static const char *const fc_sources[] = {
	"/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/"
	"analysisbase:21.2.100",
};
static const struct rc_tag fc_tags[] = {
	{"x86_64-centos7-gcc8-opt", "atlas/analysisbase:21.2.100",
	 "AnalysisBase", "21.2.100", fc_sources, N(fc_sources)},
};

static const char *const only_atlas[] = {"atlas"};
static const char *const only_any[] = {"any"};
static const char *const only_slash_cvmfs[] = {"/cvmfs"};
static const char *const centos7_gcc8[] = {"x86_64-centos7-gcc8-opt"};

enum variant {
	V_AGLT2,      /* the job-brokerage seed's dictionary (no hardware) */
	V_AGLT2_HW,   /* the brokerage seed's, with its architectures */
	V_NOHW,       /* no architectures published (as V_AGLT2) */
	V_GPU_EXCL,   /* only the gpu dictionary, nvidia exclusive */
	V_PREFIX,     /* containers by prefix, no 'any' */
	V_FC,         /* fat-container tags, 'any' containers */
	V_SLASHCVMFS, /* only '/cvmfs' container, one cmtconfig */
	V_TAGONLY,    /* no cvmfs nor containers, one cmtconfig, the seed's
			 tags: only RC-07 can accept */
	V_NOCVMFS_ANY,/* no cvmfs, 'any' container, the seed's tags */
	V_ATLASONLY,  /* cvmfs atlas only, no containers, one cmtconfig */
	V_CVMFSANY,   /* cvmfs 'any', no containers, one cmtconfig */
	V_NULL,       /* releases=AUTO publishing nothing */
	V_COUNT
};

static void make_variant(enum variant v, struct rc_sw *sw)
{
	static const struct rc_sw aglt2 = {
		aglt2_cmtconfigs, N(aglt2_cmtconfigs),
		aglt2_containers, N(aglt2_containers),
		aglt2_cvmfs,      N(aglt2_cvmfs),
		NULL,             NULL,
		aglt2_tags,       N(aglt2_tags),
	};
	*sw = aglt2;
	switch (v) {
	case V_AGLT2:
	case V_NOHW:
	case V_NULL:
	case V_COUNT:
		break;
	case V_AGLT2_HW:
		sw->cpu = &aglt2_cpu;
		sw->gpu = &aglt2_gpu;
		break;
	case V_GPU_EXCL:
		sw->gpu = &aglt2_gpu;
		break;
	case V_PREFIX:
		sw->containers = pfx_containers;
		sw->ncontainers = N(pfx_containers);
		break;
	case V_FC:
		sw->tags = fc_tags;
		sw->ntags = N(fc_tags);
		break;
	case V_SLASHCVMFS:
		sw->containers = only_slash_cvmfs;
		sw->ncontainers = 1;
		sw->cmtconfigs = centos7_gcc8;
		sw->ncmtconfigs = 1;
		break;
	case V_TAGONLY:
		sw->cvmfs = NULL;
		sw->ncvmfs = 0;
		sw->containers = NULL;
		sw->ncontainers = 0;
		sw->cmtconfigs = centos7_gcc8;
		sw->ncmtconfigs = 1;
		break;
	case V_NOCVMFS_ANY:
		sw->cvmfs = NULL;
		sw->ncvmfs = 0;
		sw->containers = only_any;
		sw->ncontainers = 1;
		sw->cmtconfigs = centos7_gcc8;
		sw->ncmtconfigs = 1;
		break;
	case V_ATLASONLY:
	case V_CVMFSANY:
		sw->cvmfs = v == V_ATLASONLY ? only_atlas : only_any;
		sw->ncvmfs = 1;
		sw->containers = NULL;
		sw->ncontainers = 0;
		sw->cmtconfigs = centos7_gcc8;
		sw->ncmtconfigs = 1;
		break;
	}
}

/* ---- RC-02: parsing ------------------------------------------------------ */

static void test_rc02_parse_arch(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int rc;
		const char *plat, *base;
		int has_cpu;
		const char *arch, *vendor, *instr;
		int has_gpu;
		const char *gvendor, *gmodel;
	} cases[] = {
		{NULL, GB_OK, "", "", 0, "", "", "", 0, "", ""},
		{"", GB_OK, "", "", 0, "", "", "", 0, "", ""},
		/* Only the platform: its dashes are not separators. */
		{"x86_64-centos7-gcc8-opt", GB_OK, "x86_64-centos7-gcc8-opt", "",
		 0, "", "", "", 0, "", ""},
		{"x86_64-centos7-gcc8-opt@centos7", GB_OK,
		 "x86_64-centos7-gcc8-opt", "centos7", 0, "", "", "", 0, "", ""},
		{"x86_64-centos7-gcc8-opt#x86_64", GB_OK,
		 "x86_64-centos7-gcc8-opt", "", 1, "x86_64", "", "", 0, "", ""},
		{"x86_64-centos7-gcc8-opt#x86_64-intel", GB_OK,
		 "x86_64-centos7-gcc8-opt", "", 1, "x86_64", "intel", "", 0, "",
		 ""},
		{"x86_64-centos7-gcc8-opt#x86_64-intel-avx2", GB_OK,
		 "x86_64-centos7-gcc8-opt", "", 1, "x86_64", "intel", "avx2", 0,
		 "", ""},
		{"x86_64-centos7-gcc8-opt&nvidia", GB_OK,
		 "x86_64-centos7-gcc8-opt", "", 0, "", "", "", 1, "nvidia", ""},
		{"x86_64-centos7-gcc8-opt&nvidia-kt100", GB_OK,
		 "x86_64-centos7-gcc8-opt", "", 0, "", "", "", 1, "nvidia",
		 "kt100"},
		{"x86_64-centos7-gcc8-opt@centos7#x86_64-intel-avx2&nvidia-kt100",
		 GB_OK, "x86_64-centos7-gcc8-opt", "centos7", 1, "x86_64",
		 "intel", "avx2", 1, "nvidia", "kt100"},
		/* Pieces are delimited by their own separator, any order. */
		{"p&nvidia-kt100#x86_64@el9", GB_OK, "p", "el9", 1, "x86_64", "",
		 "", 1, "nvidia", "kt100"},
		/* A separator with an empty piece still asks for the device. */
		{"p#", GB_OK, "p", "", 1, "", "", "", 0, "", ""},
		{"p&", GB_OK, "p", "", 0, "", "", "", 1, "", ""},
		{"#x86_64", GB_OK, "", "", 1, "x86_64", "", "", 0, "", ""},
		{"p@", GB_OK, "p", "", 0, "", "", "", 0, "", ""},
		/* Empty fields inside a spec. */
		{"p#-intel", GB_OK, "p", "", 1, "", "intel", "", 0, "", ""},
		{"p#x86_64--avx2", GB_OK, "p", "", 1, "x86_64", "", "avx2", 0, "",
		 ""},
		/* The last field keeps further dashes. */
		{"p#x86_64-intel-avx512-vnni", GB_OK, "p", "", 1, "x86_64",
		 "intel", "avx512-vnni", 0, "", ""},
		{"p&nvidia-a100-80gb", GB_OK, "p", "", 0, "", "", "", 1, "nvidia",
		 "a100-80gb"},
		/* Repeated separators. */
		{"p@a@b", GB_EINVAL, "", "", 0, "", "", "", 0, "", ""},
		{"p#a#b", GB_EINVAL, "", "", 0, "", "", "", 0, "", ""},
		{"p&a&b", GB_EINVAL, "", "", 0, "", "", "", 0, "", ""},
		{"p##x86_64", GB_EINVAL, "", "", 0, "", "", "", 0, "", ""},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct rc_arch a;
		memset(&a, 'x', sizeof(a)); /* the parse must clear it */
		int rc = rc_parse_arch(cases[i].in, &a);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): rc %d, expected %d", i,
				 cases[i].in ? cases[i].in : "NULL", rc,
				 cases[i].rc);
		assert_string_equal(a.sw_platform, cases[i].plat);
		assert_string_equal(a.base_platform, cases[i].base);
		assert_int_equal(a.has_cpu, cases[i].has_cpu);
		assert_string_equal(a.cpu_arch, cases[i].arch);
		assert_string_equal(a.cpu_vendor, cases[i].vendor);
		assert_string_equal(a.cpu_instr, cases[i].instr);
		assert_int_equal(a.has_gpu, cases[i].has_gpu);
		assert_string_equal(a.gpu_vendor, cases[i].gvendor);
		assert_string_equal(a.gpu_model, cases[i].gmodel);
	}
}

/* RC-02: every piece must fit RC_SPEC_MAX - 1 characters. */
static void test_rc02_parse_too_long(void **state)
{
	(void)state;
	char longest[RC_SPEC_MAX + 16], s[2 * RC_SPEC_MAX + 16];
	memset(longest, 'a', RC_SPEC_MAX - 1);
	longest[RC_SPEC_MAX - 1] = '\0';
	struct rc_arch a;

	/* RC_SPEC_MAX - 1 characters fit in every position. */
	assert_int_equal(rc_parse_arch(longest, &a), GB_OK);
	assert_int_equal(strlen(a.sw_platform), RC_SPEC_MAX - 1);
	snprintf(s, sizeof(s), "p@%s", longest);
	assert_int_equal(rc_parse_arch(s, &a), GB_OK);
	snprintf(s, sizeof(s), "p#x-y-%s", longest);
	assert_int_equal(rc_parse_arch(s, &a), GB_OK);
	assert_int_equal(strlen(a.cpu_instr), RC_SPEC_MAX - 1);

	/* One more is refused, and the result is left empty. */
	static const char *const fmts[] = {
		"%sa", "p@%sa", "p#%sa", "p#x-%sa", "p#x-y-%sa", "p&%sa",
		"p&nvidia-%sa",
	};
	for (size_t i = 0; i < N(fmts); i++) {
		snprintf(s, sizeof(s), fmts[i], longest);
		assert_int_equal(rc_parse_arch(s, &a), GB_EINVAL);
		assert_string_equal(a.sw_platform, "");
		assert_int_equal(a.has_cpu, 0);
		assert_int_equal(a.has_gpu, 0);
	}
	assert_int_equal(rc_parse_arch("p", NULL), GB_EINVAL);
}

/* ---- RC-03: one attribute ------------------------------------------------ */

static void test_rc03_attr_accepts(void **state)
{
	(void)state;
	static const char *const x86[] = {"x86_64"};
	static const char *const blank[] = {""};
	static const char *const x86_excl[] = {"x86_64", "excl"};
	static const char *const arm[] = {"arm64"};
	static const char *const blank_excl[] = {"", "excl"};
	static const struct {
		const char *const *list;
		size_t n;
		const char *want;
		int ok;
	} cases[] = {
		/* The seed's example: #x86_64 is accepted by these ... */
		{x86, 1, "x86_64", 1},
		{blank, 1, "x86_64", 1},
		{x86_excl, 2, "x86_64", 1},
		/* ... but not by arm64. */
		{arm, 1, "x86_64", 0},
		/* Asking nothing: fine unless the list is exclusive. */
		{x86, 1, "", 1},
		{x86, 1, NULL, 1},
		{x86_excl, 2, "", 0},
		{arm, 1, "", 1},
		/* Unpublished attribute and "" accept anything. */
		{NULL, 0, "arm64", 1},
		{NULL, 0, "", 1},
		{blank, 1, "", 1},
		{blank_excl, 2, "", 1},
		{blank_excl, 2, "riscv", 1},
		/* Exact comparison. */
		{x86, 1, "x86", 0},
		{x86, 1, "X86_64", 0},
	};
	for (size_t i = 0; i < N(cases); i++)
		if (rc_attr_accepts(cases[i].list, cases[i].n, cases[i].want) !=
		    cases[i].ok)
			fail_msg("RC-03 attr case %zu: expected %d", i,
				 cases[i].ok);
}

/* ---- rc_check cases ------------------------------------------------------ */

struct rc_case {
	const char *what;
	enum variant v;
	int with_all;          /* pass the ALL queue */
	const char *arch;
	const char *container;
	int only_tags;
	const char *project, *version;
	enum rc_kind kind;
	const char *rule;      /* NULL = accepted */
	const char *code;
	const char *str;       /* expected string argument, NULL = none */
	double v0;             /* expected first number */
};

#define GCC8 "x86_64-centos7-gcc8-opt"
#define SLC6 "x86_64-slc6-gcc62-opt"

static void run_cases(const struct rc_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rc_case *k = &cases[i];
		struct rc_sw sw;
		make_variant(k->v, &sw);
		struct rc_need need = {
			.container_name = k->container,
			.only_tags_fc = k->only_tags,
			.sw_project = k->project,
			.sw_version = k->version,
			.kind = k->kind,
		};
		assert_int_equal(rc_parse_arch(k->arch, &need.arch), GB_OK);
		struct dec_candidate c;
		struct dec_decision d;
		dec_init(&d, &c, 1);
		c.name = "AGLT2";
		int ok = rc_check(&need, k->v == V_NULL ? NULL : &sw,
				  k->with_all ? &all_queue : NULL, &c, "sw");
		if (ok != (k->rule == NULL))
			fail_msg("%s: rc_check %d, reason %s/%s", k->what, ok,
				 c.nreasons ? c.reasons[0].rule : "-",
				 c.nreasons ? c.reasons[0].code : "-");
		if (ok) {
			assert_false(dec_dropped(&c));
			assert_int_equal(c.nreasons, 0);
			continue;
		}
		assert_true(dec_dropped(&c));
		assert_string_equal(c.stage, "sw");
		assert_int_equal(c.nreasons, 1);
		const struct dec_reason *r = &c.reasons[0];
		if (strcmp(r->rule, k->rule) != 0 ||
		    strcmp(r->code, k->code) != 0)
			fail_msg("%s: got %s/%s, expected %s/%s", k->what,
				 r->rule, r->code, k->rule, k->code);
		if (k->str == NULL)
			assert_null(r->str);
		else
			assert_string_equal(r->str, k->str);
		assert_near(r->v[0], k->v0, 1e-12);
		/* The detail renders and names the compared string. */
		char buf[256];
		int len = dec_reason_format(r, buf, sizeof(buf));
		assert_true(len > 0 && (size_t)len < sizeof(buf));
		if (k->str != NULL && strstr(buf, k->str) == NULL)
			fail_msg("%s: '%s' lacks '%s'", k->what, buf, k->str);
	}
}

/* RC-03 with the brokerage seed's AGLT2 (cpu vendors intel,excl; gpu
** vendors nvidia,excl): each 'excl' list has a case asking its value
** (accepted) and one asking nothing or another value (refused, with the
** list's length as the number compared). */
static void test_rc03_hardware(void **state)
{
	(void)state;
#define INTEL "#x86_64-intel-avx2"
	static const struct rc_case cases[] = {
		{"RC-03 full spec matches AGLT2", V_AGLT2_HW, 0,
		 GCC8 INTEL "&nvidia-kt100", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-03 no spec: the cpu vendor list is exclusive", V_AGLT2_HW,
		 0, GCC8, NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-03",
		 "cpu_vendor", NULL, 2},
		{"RC-03 arm64 not in arch list", V_AGLT2_HW, 0,
		 GCC8 "#arm64-intel-avx2", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-03", "cpu_arch", "arm64", 1},
		{"RC-03 #x86_64 alone: vendor list is exclusive", V_AGLT2_HW, 0,
		 GCC8 "#x86_64", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-03", "cpu_vendor", NULL, 2},
		{"RC-03 amd not among intel,excl", V_AGLT2_HW, 0,
		 GCC8 "#x86_64-amd-avx2", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-03", "cpu_vendor", "amd", 2},
		{"RC-03 instruction set missing is fine (no excl)", V_AGLT2_HW,
		 0, GCC8 "#x86_64-intel&nvidia", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-03 sse4 not in instr list", V_AGLT2_HW, 0,
		 GCC8 "#x86_64-intel-sse4", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-03", "cpu_instr", "sse4", 1},
		{"RC-03 gpu vendor only, model list not exclusive", V_AGLT2_HW,
		 0, GCC8 INTEL "&nvidia", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-03 amd gpu refused", V_AGLT2_HW, 0, GCC8 INTEL "&amd-kt100",
		 NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-03", "gpu_vendor",
		 "amd", 2},
		{"RC-03 a100 not in model list", V_AGLT2_HW, 0,
		 GCC8 INTEL "&nvidia-a100", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-03", "gpu_model", "a100", 1},
		{"RC-03 '&' naming nothing: gpu vendor exclusive", V_AGLT2_HW, 0,
		 GCC8 INTEL "&", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-03", "gpu_vendor", NULL, 2},
		/* The issue's case: the exclusive gpu list refuses a CPU task. */
		{"RC-03 cpu-only task refused by the exclusive gpu vendors",
		 V_AGLT2_HW, 0, GCC8 INTEL, NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-03", "gpu_vendor", NULL, 2},
		{"RC-03 gpu-exclusive queue refuses a plain task", V_GPU_EXCL, 0,
		 GCC8, NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-03",
		 "gpu_vendor", NULL, 2},
		{"RC-03 gpu-exclusive queue takes an nvidia task", V_GPU_EXCL, 0,
		 GCC8 "&nvidia", NULL, 0, "Athena", "21.0.38", RC_RELEASE, NULL,
		 NULL, NULL, 0},
		{"RC-03 gpu-exclusive queue refuses an amd task", V_GPU_EXCL, 0,
		 GCC8 "&amd", NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-03",
		 "gpu_vendor", "amd", 2},
		{"RC-03 no cpu dictionary refuses a cpu spec", V_NOHW, 0,
		 GCC8 "#arm64-amd-sve", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-03", "cpu", "arm64", 0},
		{"RC-03 no cpu dictionary refuses '#' naming nothing", V_NOHW, 0,
		 GCC8 "#", NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-03",
		 "cpu", "", 0},
		{"RC-03 no cpu dictionary, no cpu spec: accepted", V_NOHW, 0,
		 GCC8, NULL, 0, "Athena", "21.0.38", RC_RELEASE, NULL, NULL,
		 NULL, 0},
		{"RC-03 gpu dictionary only refuses a cpu spec", V_GPU_EXCL, 0,
		 GCC8 "#x86_64&nvidia", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-03", "cpu", "x86_64", 0},
		{"RC-03 no gpu dictionary refuses a gpu spec", V_NOHW, 0,
		 GCC8 "&nvidia-kt100", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-03", "gpu", NULL, 0},
		{"RC-03 hardware is checked before the container", V_AGLT2_HW, 0,
		 GCC8 "#arm64", "atlas/athena:21.0.38", 0, NULL, NULL,
		 RC_RELEASE, "RC-03", "cpu_arch", "arm64", 1},
	};
#undef INTEL
	run_cases(cases, N(cases));
}

static void test_rc04_only_tags_fc(void **state)
{
	(void)state;
	static const struct rc_case cases[] = {
		{"RC-04 name equals a tag's container_name", V_FC, 0, GCC8,
		 "atlas/analysisbase:21.2.100", 1, NULL, NULL, RC_RELEASE, NULL,
		 NULL, NULL, 0},
		{"RC-04 name is one of a tag's sources", V_FC, 0, GCC8,
		 "/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/"
		 "analysisbase:21.2.100",
		 1, NULL, NULL, RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-04 no tag holds the name", V_FC, 0, GCC8,
		 "atlas/analysisbase:21.2.99", 1, NULL, NULL, RC_RELEASE,
		 "RC-04", "container_tag", "atlas/analysisbase:21.2.99", 1},
		{"RC-04 exact match only, no prefix", V_FC, 0, GCC8,
		 "atlas/analysisbase", 1, NULL, NULL, RC_RELEASE, "RC-04",
		 "container_tag", "atlas/analysisbase", 1},
		/* The seed's AGLT2 tags carry no container; 'any' containers
		** do not help a task that uses only tags. */
		{"RC-04 'any' containers do not count", V_AGLT2, 1, GCC8,
		 "atlas/athena:21.0.38", 1, NULL, NULL, RC_RELEASE, "RC-04",
		 "container_tag", "atlas/athena:21.0.38", 2},
	};
	run_cases(cases, N(cases));
}

static void test_rc05_containers(void **state)
{
	(void)state;
	static const struct rc_case cases[] = {
		{"RC-05 'any' in AGLT2 containers", V_AGLT2, 0, GCC8,
		 "some/image:1", 0, NULL, NULL, RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-05 '/cvmfs' in containers", V_SLASHCVMFS, 0, GCC8,
		 "some/image:1", 0, NULL, NULL, RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-05 name forward-matches an entry", V_PREFIX, 0, GCC8,
		 "docker://atlas/athena:22.0.1", 0, NULL, NULL, RC_RELEASE, NULL,
		 NULL, NULL, 0},
		{"RC-05 entry longer than the name is no match", V_PREFIX, 0,
		 GCC8, "docker://", 0, NULL, NULL, RC_RELEASE, "RC-05",
		 "container", "docker://", 2},
		{"RC-05 source path via ALL forward-matches", V_PREFIX, 1, GCC8,
		 "atlas/athena:21.0.38", 0, NULL, NULL, RC_RELEASE, NULL, NULL,
		 NULL, 0},
		{"RC-05 without ALL the name cannot be resolved", V_PREFIX, 0,
		 GCC8, "atlas/athena:21.0.38", 0, NULL, NULL, RC_RELEASE,
		 "RC-05", "container", "atlas/athena:21.0.38", 2},
		{"RC-05 resolved source path matches no entry", V_PREFIX, 1,
		 GCC8, "atlas/other:1.0", 0, NULL, NULL, RC_RELEASE, "RC-05",
		 "container", "atlas/other:1.0", 2},
		{"RC-05 name unknown to ALL", V_PREFIX, 1, GCC8, "atlas/x:9", 0,
		 NULL, NULL, RC_RELEASE, "RC-05", "container", "atlas/x:9", 2},
		{"RC-05 a queue publishing nothing", V_NULL, 1, GCC8,
		 "atlas/athena:21.0.38", 0, NULL, NULL, RC_RELEASE, "RC-05",
		 "container", "atlas/athena:21.0.38", 0},
		{"RC-05 a container needs no cvmfs or release", V_NOCVMFS_ANY, 0,
		 GCC8, "some/image:1", 0, NULL, NULL, RC_NIGHTLY, NULL, NULL,
		 NULL, 0},
	};
	run_cases(cases, N(cases));
}

static void test_rc06_cvmfs_and_platform(void **state)
{
	(void)state;
	static const struct rc_case cases[] = {
		{"RC-06 AGLT2 release", V_AGLT2, 0, GCC8, NULL, 0, "Athena",
		 "22.0.1", RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-06 AGLT2 nightly", V_AGLT2, 0, GCC8, "", 0, "Athena",
		 "master", RC_NIGHTLY, NULL, NULL, NULL, 0},
		{"RC-06 '/cvmfs' container, platform not in cmtconfigs",
		 V_SLASHCVMFS, 0, "x86_64-el9-gcc13-opt", NULL, 0, "Athena",
		 "24.0.1", RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-06 platform in cmtconfigs, no containers", V_ATLASONLY, 0,
		 GCC8, NULL, 0, "Athena", "22.0.1", RC_RELEASE, NULL, NULL,
		 NULL, 0},
		{"RC-06 platform in cmtconfigs with a base platform",
		 V_ATLASONLY, 0, GCC8 "@centos7", NULL, 0, "Athena", "22.0.1",
		 RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-06 cvmfs 'any' serves nightlies", V_CVMFSANY, 0, GCC8, NULL,
		 0, "Athena", "master", RC_NIGHTLY, NULL, NULL, NULL, 0},
		/* Failing RC-06 where RC-07 cannot apply (base platform, no
		** 'any' container): RC-06 names the failing half. */
		{"RC-06 nightlies not in cvmfs", V_ATLASONLY, 0, GCC8 "@centos7",
		 NULL, 0, "Athena", "master", RC_NIGHTLY, "RC-06", "cvmfs",
		 "nightlies", 1},
		{"RC-06 atlas not in cvmfs of a queue publishing nothing",
		 V_NULL, 0, GCC8 "@centos7", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-06", "cvmfs", "atlas", 0},
		{"RC-06 platform not in cmtconfigs, base platform needed",
		 V_ATLASONLY, 0, SLC6 "@slc6", NULL, 0, "Athena", "21.0.38",
		 RC_RELEASE, "RC-06", "platform", SLC6, 1},
		{"RC-06 no cvmfs, base platform, no 'any' container", V_TAGONLY,
		 0, SLC6 "@slc6", NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-06", "cvmfs", "atlas", 0},
		/* cvmfs has atlas: RC-06 applies and decides; the seed's
		** 21.0.38 tag on SLC6 is no fallback (PanDA's order). The
		** same tag without the cvmfs repository is RC-07's. */
		{"RC-06 applies: platform missing, a tag does not help",
		 V_ATLASONLY, 0, SLC6, NULL, 0, "Athena", "21.0.38", RC_RELEASE,
		 "RC-06", "platform", SLC6, 1},
		{"RC-06 does not apply: the tag serves (RC-07)", V_TAGONLY, 0,
		 SLC6, NULL, 0, "Athena", "21.0.38", RC_RELEASE, NULL, NULL, NULL,
		 0},
	};
	run_cases(cases, N(cases));
}

static void test_rc07_tags(void **state)
{
	(void)state;
	static const struct rc_case cases[] = {
		{"RC-07 the seed's Athena 21.0.38 tag", V_TAGONLY, 0, SLC6, NULL,
		 0, "Athena", "21.0.38", RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-07 the seed's AthDerivation tag", V_TAGONLY, 0, SLC6, NULL,
		 0, "AthDerivation", "21.2.2.0", RC_RELEASE, NULL, NULL, NULL,
		 0},
		{"RC-07 another version", V_TAGONLY, 0, SLC6, NULL, 0, "Athena",
		 "21.0.39", RC_RELEASE, "RC-07", "release", "21.0.39", 2},
		{"RC-07 another project", V_TAGONLY, 0, SLC6, NULL, 0,
		 "AthDerivation", "21.0.38", RC_RELEASE, "RC-07", "release",
		 "21.0.38", 2},
		{"RC-07 another platform", V_TAGONLY, 0, "x86_64-slc6-gcc8-opt",
		 NULL, 0, "Athena", "21.0.38", RC_RELEASE, "RC-07", "release",
		 "21.0.38", 2},
		/* RC-07 when cvmfs lacks the repository: an installed tag
		** serves, and 'any' lets it serve a base platform. */
		{"RC-07 tag without cvmfs", V_NOCVMFS_ANY, 0, SLC6 "@slc6", NULL,
		 0, "Athena", "21.0.38", RC_RELEASE, NULL, NULL, NULL, 0},
		{"RC-07 no tag and no cvmfs", V_NOCVMFS_ANY, 0, SLC6 "@slc6",
		 NULL, 0, "Athena", "21.0.40", RC_RELEASE, "RC-07", "release",
		 "21.0.40", 2},
		{"RC-07 nightly tag missing, nightlies not in cvmfs",
		 V_ATLASONLY, 0, GCC8, NULL, 0, "Athena", "master", RC_NIGHTLY,
		 "RC-07", "release", "master", 2},
		{"RC-07 no software named at all", V_TAGONLY, 0, "", NULL, 0,
		 NULL, NULL, RC_RELEASE, "RC-07", "release", "", 2},
	};
	run_cases(cases, N(cases));
}

/* RC-06 with a NULL need and a NULL candidate: checked, nothing recorded. */
static void test_rc06_null_need_and_candidate(void **state)
{
	(void)state;
	struct rc_sw sw;
	make_variant(V_AGLT2, &sw);
	/* AGLT2 has cvmfs atlas and 'any' containers: an empty need passes. */
	assert_int_equal(rc_check(NULL, &sw, NULL, NULL, "sw"), 1);
	/* A queue publishing nothing fails it without a candidate to mark. */
	assert_int_equal(rc_check(NULL, NULL, NULL, NULL, "sw"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc02_parse_arch),
		cmocka_unit_test(test_rc02_parse_too_long),
		cmocka_unit_test(test_rc03_attr_accepts),
		cmocka_unit_test(test_rc03_hardware),
		cmocka_unit_test(test_rc04_only_tags_fc),
		cmocka_unit_test(test_rc05_containers),
		cmocka_unit_test(test_rc06_cvmfs_and_platform),
		cmocka_unit_test(test_rc07_tags),
		cmocka_unit_test(test_rc06_null_need_and_candidate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
