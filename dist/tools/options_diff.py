#!/usr/bin/env python3
"""Compares the options a program's --help lists with those its manual page
documents under OPTIONS, both ways.

    options_diff.py PROGRAM-NAME HELP-FILE MANPAGE

--help: every option token (-x, --long) on an option line (indented, then a
dash) and on the usage lines.  Manual page: the tag line of every .TP under
.SH OPTIONS.  Prints one line per difference, naming the option and where it
is missing, and exits 1 when there is any."""
import re
import sys

TOKEN = re.compile(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)')


def help_entries(text, prog):
    entries = []
    for line in text.splitlines():
        if re.match(r'^ {1,7}-', line):
            # the option part: up to the first run of two spaces after it
            head = re.split(r'(?<=\S)\s{2,}', line.strip(), maxsplit=1)[0]
            toks = [t for t in TOKEN.findall(head)]
            entries.append(toks)
        elif re.match(r'^\s*(usage:\s*)?' + re.escape(prog) + r'\s', line):
            entries.extend([t] for t in TOKEN.findall(line))
    return entries


def man_entries(text):
    entries, in_options, tag_next = [], False, False
    for line in text.splitlines():
        if line.startswith('.SH'):
            in_options = line.split(None, 1)[1].strip().strip('"') == 'OPTIONS'
            continue
        if not in_options:
            continue
        if line.startswith('.TP'):
            tag_next = True
            continue
        if tag_next:
            tag_next = False
            clean = re.sub(r'\\f[BIRP]|\\f\(..|\\&', '', line).replace('\\-', '-')
            clean = re.sub(r'^\.\w+\s*', '', clean)
            entries.append(TOKEN.findall(clean))
    return entries


def main():
    prog, help_file, man_file = sys.argv[1:4]
    helps = help_entries(open(help_file).read(), prog)
    mans = man_entries(open(man_file).read())
    h_tokens = {t for e in helps for t in e}
    m_tokens = {t for e in mans for t in e}
    problems = []
    for t in sorted(h_tokens - m_tokens):
        problems.append(f'{t}: in `{prog} --help` but not documented under OPTIONS in {man_file}')
    for t in sorted(m_tokens - h_tokens):
        problems.append(f'{t}: documented under OPTIONS in {man_file} but not in `{prog} --help`')
    # An option line names its short and long form together on both sides.
    h_pairs = {frozenset(e) for e in helps if len(e) > 1}
    m_pairs = {frozenset(e) for e in mans if len(e) > 1}
    for p in sorted(h_pairs - m_pairs, key=sorted):
        if p <= m_tokens:
            problems.append(f'{", ".join(sorted(p))}: one option in `{prog} --help`, '
                            f'separate entries in {man_file}')
    for p in sorted(m_pairs - h_pairs, key=sorted):
        if p <= h_tokens:
            problems.append(f'{", ".join(sorted(p))}: one option in {man_file}, '
                            f'separate entries in `{prog} --help`')
    if not h_tokens:
        problems.append(f'no options found in `{prog} --help`')
    for p in problems:
        print(p)
    print(f'{prog}: {len(h_tokens)} option names in --help, {len(m_tokens)} in {man_file}',
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
