"""A part of a file between two marker lines, which a tool writes from the tree and checks
(tools/layout_doc.py: CONTRIBUTING.md's file table; tools/sql_comments.py: the functions' SQL
comments in sql/install/finalize.sql)."""


def between(path, begin, end):
    """The file's lines, and the indexes of its two marker lines; None when one is missing."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if begin not in lines or end not in lines:
        return None
    return lines, lines.index(begin), lines.index(end)


def differences(old, new, missing, gone, changed):
    """What differs between two dicts keyed by name, one line a name, each said as its label
    (`missing`: only in new; `gone`: only in old; `changed`: in both, not equal)."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            out.append(f"  {missing}: {key}")
        elif key not in new:
            out.append(f"  {gone}: {key}")
        elif old[key] != new[key]:
            out.append(f"  {changed}: {key}")
    return out


def refuse(title, items):
    """Prints a refusal and what it names, one item a line; the exit status 1."""
    print(title)
    for item in items:
        print(f"  {item}")
    return 1


def settle(path, lines, a, b, new, write, wrote, current):
    """With `write`, puts `new` between the marker lines and says `wrote`; without, says `current`
    when the part is `new` already. 0 then; None when a check found the part differs."""
    if write:
        replace(path, lines, a, b, new)
        print(wrote)
        return 0
    if lines[a + 1 : b] == new:
        print(current)
        return 0
    return None


def replace(path, lines, a, b, new):
    """Writes the file with `new` between its marker lines (at indexes a and b)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines[: a + 1] + new + lines[b:]))
