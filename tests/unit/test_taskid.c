// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "taskid.h"
#include "taskparse.h"
#include "unit.h"

static void check_key(const char *in, const char *expected)
{
	char out[TASK_KEY_MAX + 1];
	size_t n = task_key_sanitise(in, out, TASK_KEY_MAX);

	CHECK_STR(out, expected);
	CHECK_UINT(n, strlen(expected));
}

static void taskid_key_sanitise(void)
{
	char big[300];

	check_key("FASTQC (sample_1)", "FASTQC__sample_1_");
	check_key("nf-3f/a2b4", "nf-3f_a2b4");
	check_key("..", "_.");
	check_key(".iowrap", "_iowrap");
	check_key("a/../../etc", "a_.._.._etc");
	check_key("caf\xc3\xa9\n\"x\"", "caf____x_");
	check_key("", "");
	check_key("ok-1.2_3", "ok-1.2_3");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[0] = '.';
	{
		char out[TASK_KEY_MAX + 1];

		CHECK_UINT(task_key_sanitise(big, out, TASK_KEY_MAX),
			   TASK_KEY_MAX);
		CHECK_UINT(strlen(out), TASK_KEY_MAX);
		CHECK(out[0] == '_');
	}
}

static void taskid_host_component_short(void)
{
	char out[64];

	taskid_host_component("node17.cluster.example.org", out, sizeof(out));
	CHECK_STR(out, "node17");
	taskid_host_component("we/ird host", out, sizeof(out));
	CHECK_STR(out, "we_ird_host");
	taskid_host_component("", out, sizeof(out));
	CHECK_STR(out, "localhost");
	taskid_host_component(".hidden", out, sizeof(out));
	CHECK_STR(out, "localhost");
}

static void taskid_value_cut_on_char_boundary(void)
{
	char *big = malloc(TASK_VALUE_MAX + 10);
	char *v;
	bool cut;

	/* 'a', then 2-byte characters: the limit falls mid-character. */
	big[0] = 'a';
	for (size_t i = 1; i + 1 < TASK_VALUE_MAX + 10; i += 2) {
		big[i] = '\xc3';
		big[i + 1] = '\xa9';
	}
	v = task_value_dup(big, TASK_VALUE_MAX + 9, &cut);
	CHECK(cut);
	CHECK_UINT(strlen(v), TASK_VALUE_MAX - 1);
	CHECK(((unsigned char)v[strlen(v) - 1] & 0xc0) == 0x80);
	free(v);
	v = task_value_dup("short", 5, &cut);
	CHECK(!cut);
	CHECK_STR(v, "short");
	free(v);
	free(big);
}

/* The header Nextflow 24.04 writes (BashWrapperBuilder.getTaskMetadata)
 * after a grid executor's directives. */
static const char nf24_header[] = "#!/bin/bash\n"
				  "#SBATCH -J nf-FASTQC_(sample_1)\n"
				  "#SBATCH -o /w/3f/abc/.command.log\n"
				  "### ---\n"
				  "### name: 'FASTQC (sample_1)'\n"
				  "### container: 'quay.io/biocontainers/x'\n"
				  "### outputs:\n"
				  "### - 'out.txt'\n"
				  "### ...\n"
				  "set -e\n"
				  "set -u\n";

static const char nf23_header[] =
	"#!/bin/bash\n"
	"# NEXTFLOW TASK: NFCORE_RNASEQ:RNASEQ:FASTQC (s1 (a))\n"
	"set -e\n";

static void check_header(const char *text, size_t len, int expected_err,
			 const char *expected_name)
{
	struct strbuf name;

	sb_init(&name, 0);
	CHECK_INT(nextflow_header_name(text, len, &name), expected_err);
	if (expected_name)
		CHECK_STR(sb_str(&name), expected_name);
	sb_release(&name);
}

static void taskid_nextflow_header(void)
{
	static const char after_body[] = "#!/bin/bash\nset -e\n"
					 "# NEXTFLOW TASK: late\n";
	static const char quote[] = "#!/bin/bash\n### name: 'it's (x)'\r\n";
	static const char binary[] = "#!/bin/bash\n#\0\x01\x02\n";
	static const char noquote[] = "### name: plain";

	check_header(nf24_header, strlen(nf24_header), 0, "FASTQC (sample_1)");
	check_header(nf23_header, strlen(nf23_header), 0,
		     "NFCORE_RNASEQ:RNASEQ:FASTQC (s1 (a))");
	check_header(after_body, strlen(after_body), -ENOENT, NULL);
	check_header(quote, strlen(quote), 0, "it's (x)");
	check_header(binary, sizeof(binary) - 1, -EINVAL, NULL);
	check_header(noquote, strlen(noquote), 0, "plain");
	check_header("", 0, -ENOENT, NULL);
	/* A header cut before its line ends still names the task. */
	check_header(
		nf24_header,
		(size_t)(strstr(nf24_header, "(sample_1)'") + 3 - nf24_header),
		0, "FASTQC (sa");
}

static void check_process(const char *name, const char *expected)
{
	struct strbuf p;

	sb_init(&p, 0);
	nextflow_process_of(name, &p);
	CHECK_STR(sb_str(&p), expected);
	sb_release(&p);
}

static void check_hash(const char *workdir, const char *expected)
{
	struct strbuf h;

	sb_init(&h, 0);
	CHECK_INT(nextflow_hash_of(workdir, &h), expected != NULL);
	if (expected)
		CHECK_STR(sb_str(&h), expected);
	sb_release(&h);
}

static void taskid_nextflow_process_and_hash(void)
{
	check_process("FASTQC (sample_1)", "FASTQC");
	check_process("NFCORE:RNASEQ:TRIM (a (b))", "NFCORE:RNASEQ:TRIM");
	check_process("sayHello", "sayHello");
	check_process("", "");
	check_hash("/data/work/3f/a2b4c6d8e9f00112233445566778899a",
		   "3f/a2b4c6d8e9f00112233445566778899a");
	check_hash("/w/3f/a2b4c6d8e9f00112233445566778899a/", "3f/"
							      "a2b4c6d8e9f0011"
							      "2233445566778899"
							      "a");
	check_hash("/w/3f/a2b4c", NULL); /* too short */
	check_hash("/w/3F/a2b4c6d8", NULL); /* upper case */
	check_hash("/w/3fx/a2b4c6d8", NULL);
	check_hash("/tmp/nxf.AbCdEf1234", NULL); /* a scratch dir */
	check_hash("3f/a2b4c6d8", NULL);
	check_hash("/", NULL);
	check_hash("", NULL);
}

static void check_props(const char *text, bool complete, int expected_err,
			const char *expected_json)
{
	const char *json = NULL;
	size_t len = 0;

	CHECK_INT(snakemake_find_properties(text, strlen(text), complete, &json,
					    &len),
		  expected_err);
	if (expected_json)
		CHECK_MEM(json, len, expected_json, strlen(expected_json));
}

static void taskid_snakemake_find_properties(void)
{
	check_props("#!/bin/sh\n# properties = {\"rule\": \"a\"}\nrun\n", true,
		    0, "{\"rule\": \"a\"}");
	check_props("#!/bin/sh\n#SBATCH -n 1\n\n# properties = {}\n", true, 0,
		    "{}");
	check_props("#!/bin/sh\necho hi\n# properties = {}\n", true, -ENOENT,
		    NULL);
	check_props("#!/bin/sh\n# properties = {\"rule\": \"ma", false, -EINVAL,
		    NULL);
	/* The whole file, cut mid-line: found, and the parser says no. */
	check_props("#!/bin/sh\n# properties = {\"rule\": \"ma", true, 0,
		    "{\"rule\": \"ma");
	check_props("", true, -ENOENT, NULL);
}

/* What Snakemake 7.21's Job.properties() json.dumps() gives. */
static const char smk_props[] =
	"{\"type\": \"single\", \"rule\": \"map\", \"local\": false, "
	"\"input\": [\"data/a.txt\"], \"output\": [\"out/a.txt\"], "
	"\"wildcards\": {\"sample\": \"a\", \"n\": \"2\"}, \"params\": {}, "
	"\"log\": [], \"threads\": 1, \"resources\": {\"mem_mb\": 1000}, "
	"\"jobid\": 3, \"cluster\": {}}";

static void taskid_snakemake_parse_properties(void)
{
	struct snakemake_props p;
	struct strbuf why;

	sb_init(&why, 0);
	CHECK_INT(snakemake_parse_properties(smk_props, strlen(smk_props), &p,
					     &why),
		  0);
	CHECK_STR(p.rule, "map");
	CHECK_STR(p.jobid, "3");
	CHECK(p.has_wildcards);
	CHECK_UINT(p.wildcards.n, 2);
	CHECK_STR(kv_get(&p.wildcards, "sample"), "a");
	CHECK_STR(kv_get(&p.wildcards, "n"), "2");
	snakemake_props_release(&p);

	CHECK_INT(snakemake_parse_properties("{\"rule\": \"ma", 12, &p, &why),
		  -EINVAL);
	CHECK_STR(sb_str(&why),
		  "the properties are not a JSON object (malformed or cut)");
	sb_reset(&why);
	CHECK_INT(snakemake_parse_properties("[1]", 3, &p, &why), -EINVAL);
	{
		static const char json[] = "{\"jobid\": \"x\\u00e9\", "
					   "\"rule\": 5}";

		CHECK_INT(snakemake_parse_properties(json, strlen(json), &p,
						     &why),
			  0);
	}
	CHECK_STR(p.jobid, "x\xc3\xa9");
	CHECK_STR(p.rule, "5");
	CHECK(!p.has_wildcards);
	snakemake_props_release(&p);
	sb_release(&why);
}

static void taskid_snakemake_wildcards_env(void)
{
	struct kv_list l = { NULL, 0 };
	char long_pair[TASK_VALUE_MAX + 8] = "w=";
	bool cut;

	CHECK_INT(snakemake_parse_wildcards("sample=a,n=2,sample=b", &l, &cut),
		  0);
	CHECK_INT(cut, 0);
	CHECK_UINT(l.n, 2);
	CHECK_STR(l.items[0].key, "sample");
	CHECK_STR(l.items[0].value, "b");
	CHECK_STR(l.items[1].value, "2");
	kv_release(&l);
	CHECK_INT(snakemake_parse_wildcards("a=1,bad,c=3", &l, &cut), -EINVAL);
	CHECK_UINT(l.n, 1);
	kv_release(&l);
	CHECK_INT(snakemake_parse_wildcards("=x", &l, &cut), -EINVAL);
	CHECK_INT(snakemake_parse_wildcards("", &l, &cut), 0);
	CHECK_UINT(l.n, 0);
	CHECK_INT(snakemake_parse_wildcards("e=", &l, &cut), 0);
	CHECK_STR(kv_get(&l, "e"), "");
	CHECK_INT(cut, 0);
	kv_release(&l);
	/* One byte over: cut, and said. */
	memset(long_pair + 2, 'x', TASK_VALUE_MAX + 1);
	CHECK_INT(snakemake_parse_wildcards(long_pair, &l, &cut), 0);
	CHECK_INT(cut, 1);
	CHECK_UINT(strlen(kv_get(&l, "w")), TASK_VALUE_MAX);
	kv_release(&l);
}

static void check_unquote(const char *in, long expected_used,
			  const char *expected, size_t elen)
{
	struct strbuf out;

	sb_init(&out, 0);
	CHECK_INT(go_unquote(in, strlen(in), &out), expected_used);
	if (expected)
		CHECK_MEM(sb_str(&out), out.len, expected, elen);
	sb_release(&out);
}

static void taskid_go_unquote(void)
{
	check_unquote("\"plain\"", 7, "plain", 5);
	check_unquote("\"a\\\"b\\\\c\\n\\t\"rest", 13, "a\"b\\c\n\t", 7);
	check_unquote("\"\\x41\\101\\u00e9\\U0001F600\"", 26,
		      "AA\xc3\xa9\xf0\x9f\x98\x80", 8);
	check_unquote("\"\\xff\\x00z\"", 11, "\xff\0z", 3);
	check_unquote("\"unterminated", -1, NULL, 0);
	check_unquote("\"bad \\q\"", -1, NULL, 0);
	check_unquote("\"\\x4\"", -1, NULL, 0);
	check_unquote("\"\\u12\"", -1, NULL, 0);
	check_unquote("\"\\777\"", -1, NULL, 0);
	check_unquote("noquote", -1, NULL, 0);
	check_unquote("\"", -1, NULL, 0);
	check_unquote("\"\\", -1, NULL, 0);
}

static void taskid_k8s_labels(void)
{
	static const char text[] = "app=\"nextflow\"\n"
				   "nextflow.io/taskName=\"FASTQC_sample_1\"\n"
				   "broken line\n"
				   "q=\"a\\\"b\\u00e9\"\n"
				   "trailing=\"x\" junk\n"
				   "last=\"no newline\"";
	struct kv_list l = { NULL, 0 };
	struct strbuf why;
	bool cut;

	sb_init(&why, 0);
	CHECK_INT(k8s_parse_labels(text, strlen(text), &l, &why, &cut), 2);
	CHECK_INT(cut, 0);
	CHECK_STR(sb_str(&why), "line 3 is not key=\"value\"");
	CHECK_UINT(l.n, 4);
	CHECK_STR(kv_get(&l, "app"), "nextflow");
	CHECK_STR(kv_get(&l, "nextflow.io/taskName"), "FASTQC_sample_1");
	CHECK_STR(kv_get(&l, "q"), "a\"b\xc3\xa9");
	CHECK_STR(kv_get(&l, "last"), "no newline");
	kv_release(&l);
	sb_release(&why);
}

static void taskid_labels_option(void)
{
	struct kv_list l = { NULL, 0 };
	struct strbuf why;

	sb_init(&why, 0);
	CHECK_INT(taskid_parse_label("project=x", &l, &why), 0);
	CHECK_INT(taskid_parse_label("nextflow.io/run=a=b", &l, &why), 0);
	CHECK_INT(taskid_parse_label("project=y", &l, &why), 0);
	CHECK_INT(taskid_parse_label("empty=", &l, &why), 0);
	CHECK_UINT(l.n, 3);
	CHECK_STR(l.items[0].value, "y");
	CHECK_STR(kv_get(&l, "nextflow.io/run"), "a=b");
	CHECK_STR(kv_get(&l, "empty"), "");
	CHECK_INT(taskid_parse_label("novalue", &l, &why), -EINVAL);
	CHECK_INT(taskid_parse_label("=v", &l, &why), -EINVAL);
	CHECK_INT(taskid_parse_label("sp ace=v", &l, &why), -EINVAL);
	CHECK_INT(taskid_parse_label("k\n=v", &l, &why), -EINVAL);
	CHECK_UINT(l.n, 3);
	kv_release(&l);
	sb_release(&why);
}

const struct unit_test taskid_tests[] = {
	UNIT_TEST(taskid_key_sanitise),
	UNIT_TEST(taskid_host_component_short),
	UNIT_TEST(taskid_value_cut_on_char_boundary),
	UNIT_TEST(taskid_nextflow_header),
	UNIT_TEST(taskid_nextflow_process_and_hash),
	UNIT_TEST(taskid_snakemake_find_properties),
	UNIT_TEST(taskid_snakemake_parse_properties),
	UNIT_TEST(taskid_snakemake_wildcards_env),
	UNIT_TEST(taskid_go_unquote),
	UNIT_TEST(taskid_k8s_labels),
	UNIT_TEST(taskid_labels_option),
	UNIT_END,
};
