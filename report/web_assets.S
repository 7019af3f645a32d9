/* SPDX-License-Identifier: MIT */
/*
 * The files of report.html, linked into the binary (see report/html.h).
 * Paths are relative to the top of the tree, where make runs; the Makefile
 * lists them as prerequisites so that changing one rebuilds this object.
 */
#define ASSET(sym, file)           \
	.globl sym;                \
	.globl sym##_end;          \
	.balign 16;                \
sym:                               \
	.incbin file;              \
sym##_end:                         \
	.byte 0

	.section .rodata.report_web, "a", @progbits
	ASSET(report_web_template, "report/web/template.html")
	ASSET(report_web_style, "report/web/style.css")
	ASSET(report_web_echarts, "report/web/vendor/echarts.min.js")
	ASSET(report_web_app, "report/web/app.js")

	.section .note.GNU-stack, "", @progbits
