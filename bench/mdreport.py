"""Markdown helpers shared by the benchmarks' reports (accuracy.py,
overhead.py)."""
import textwrap


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def reflow(text):
    """Re-wraps each paragraph and list item of markdown prose (not the
    tables or headings) to 78 columns."""
    out, para = [], []

    def flush():
        if para:
            lead = para[0][:len(para[0]) - len(para[0].lstrip())]
            indent = lead + "  " if para[0].lstrip().startswith("- ") \
                else ""
            out.append(textwrap.fill(
                " ".join(line.strip() for line in para), width=78,
                initial_indent=lead, subsequent_indent=indent,
                break_long_words=False, break_on_hyphens=False))
            para.clear()

    for line in text.split("\n"):
        if not line.strip() or line.startswith(("|", "#")):
            flush()
            out.append(line)
        elif line.lstrip().startswith("- ") or line.startswith("**"):
            flush()
            para.append(line)
        else:
            para.append(line)
    flush()
    return "\n".join(out)
