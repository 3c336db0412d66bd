#!/usr/bin/env python3
"""Every relative link of the Markdown files resolves: the file exists, and an anchor
(`file.md#heading`, `#heading`) names a heading of that file, made into an anchor as GitHub does
(lower case, punctuation but `-` and `_` dropped, spaces to `-`, a repeat numbered -1, -2, ...).

    tools/check_links.py [FILE.md ...]      (default: every *.md of the repository, but under target/ and node_modules/)
Exit status 0 when every link resolves; each broken link is printed with its file and line.
"""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path, cache={}):
    if path not in cache:
        seen, found, fenced = {}, set(), False
        for line in open(path, encoding="utf-8"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda g: g.group(1) or "", m.group(2))
            slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
        cache[path] = found
    return cache[path]


def main(files):
    if not files:
        root = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        for top, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in ("target", "node_modules", ".git") and not d.startswith("."))
            files += [os.path.join(top, n) for n in sorted(names) if n.endswith(".md")]
    bad, count = 0, 0
    for path in files:
        fenced = False
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if fenced:
                continue
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not ours to check
                    continue
                count += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    print(f"  FAIL: {path}:{number}: {target}: {dest} does not exist")
                    bad += 1
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    print(f"  FAIL: {path}:{number}: {target}: {dest} has no heading #{anchor}")
                    bad += 1
    print(f"  {'ok' if not bad else 'FAIL'}: {count} relative links in {len(files)} files, {bad} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
