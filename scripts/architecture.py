#!/usr/bin/env python3
"""The floors of src/ read from the code (scripts/check-architecture.sh runs it).

Usage: architecture.py FLOORS_TABLE [--doc ARCHITECTURE.md] [--edges] [--circles]

Reads every `src/**/*.rs` file and finds the files each one names: `use`
trees and paths in code (`crate::`, `super::`, `self::`, a child
module's name), comments and string literals left out. A path counts
twice, to be strict: as the module it names (`crate::score::Row` ->
`src/score/mod.rs`) and as the file that defines the item, following
`use` re-exports (`crate::results::ResultFile` -> `src/results/read.rs`).
A room is a folder of `src/` or a file of its own (`src/error.rs` is the
room `error`); `lib.rs` is the crate root, which only declares the rooms.

It fails when
- a file imports a room that the FLOORS_TABLE (lines `room: rooms it may
  import`) does not allow, or a room the table does not name;
- the table itself has a circle (then it is not floors), or, with
  `--doc`, a room may import a room whose floor in the document's table
  (`| floor | room | may import |`) is not below its own;
- two or more files import each other in a circle (a module and its own
  submodules excepted: `mod.rs` declares them and they may use what it
  holds).
`--edges` prints every import between rooms; `--circles` every file circle.
Python 3 standard library only; the whole tree takes well under a second.
"""
import os
import re
import sys

ROOT = 'src'


def strip(text):
    """`text` with comments, string and char literals blanked (lines kept)."""
    out = []
    i, n = 0, len(text)
    blank = lambda s: re.sub(r'[^\n]', ' ', s)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
            continue
        if text.startswith('/*', i):
            depth, j = 0, i
            while j < n:
                if text.startswith('/*', j):
                    depth += 1
                    j += 2
                elif text.startswith('*/', j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
            continue
        if c in 'br' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'b?r(#*)"', text[i:i + 40])
            if m:
                close = '"' + m.group(1)
                j = text.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                out.append(blank(text[i:j]))
                i = j
                continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            j += 1
            out.append(blank(text[i:j]))
            i = j
            continue
        if c == "'":
            if i + 1 < n and text[i + 1] == '\\':
                j = text.find("'", i + 2)
                if 0 <= j and j - i < 12:
                    out.append(' ' * (j + 1 - i))
                    i = j + 1
                    continue
            elif i + 2 < n and text[i + 2] == "'":
                out.append('   ')
                i += 3
                continue
        out.append(c)
        i += 1
    return ''.join(out)


def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel in (['lib'], ['main']):
        return ()
    if rel[-1] == 'mod':
        rel = rel[:-1]
    return tuple(rel)


def room_of(path):
    parts = os.path.relpath(path, ROOT).split(os.sep)
    return parts[0][:-3] if len(parts) == 1 else parts[0]


ITEM = re.compile(r'\b(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|async\s+|const\s+|extern\s+"C"\s+)*'
                  r'(struct|enum|fn|trait|type|const|static|union)\s+([A-Za-z_]\w*)')
MACRO = re.compile(r'#\[macro_export\]\s*macro_rules!\s*([A-Za-z_]\w*)')
USE = re.compile(r'\buse\s+([^;]+);')
PATH = re.compile(r'(?<![\w:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:::[A-Za-z_]\w*)+)')


def depths(src):
    d, out = 0, []
    for c in src:
        out.append(d)
        d += c == '{'
        d -= c == '}'
    out.append(d)
    return out


def use_paths(tree):
    """The paths of a `use` tree: [(segments, alias)]."""
    tree = re.sub(r'\s+as\s+', '@', tree)
    tree = re.sub(r'\s+', '', tree)
    found = []

    def walk(prefix, text):
        parts, depth, cur = [], 0, ''
        for ch in text:
            depth += ch == '{'
            depth -= ch == '}'
            if ch == ',' and depth == 0:
                parts.append(cur)
                cur = ''
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for part in parts:
            if '{' in part:
                k = part.index('{')
                head = [s for s in part[:k].split('::') if s]
                walk(prefix + head, part[k + 1:part.rindex('}')])
            else:
                segs = [s for s in part.split('::') if s]
                alias = None
                if segs and '@' in segs[-1]:
                    segs[-1], alias = segs[-1].split('@')
                found.append((prefix + segs, alias))

    walk([], tree)
    return found


class Crate:
    def __init__(self):
        self.files = {}
        for d, _, names in os.walk(ROOT):
            for f in names:
                if f.endswith('.rs'):
                    p = os.path.join(d, f)
                    if p == os.path.join(ROOT, 'main.rs'):
                        continue
                    self.files[module_of(p)] = p
        self.code = {p: strip(open(p, encoding='utf-8').read()) for p in self.files.values()}
        self.items, self.aliases, self.globs = {}, {}, {}
        self.macros = {}
        for mod, p in self.files.items():
            src = self.code[p]
            depth = depths(src)
            self.items[mod] = {m.group(2) for m in ITEM.finditer(src) if depth[m.start()] == 0}
            aliases, globs = {}, []
            for m in USE.finditer(src):
                if depth[m.start()] != 0:
                    continue
                for segs, alias in use_paths(m.group(1)):
                    if not segs:
                        continue
                    if segs[-1] == '*':
                        globs.append(segs[:-1])
                    elif segs[-1] == 'self':
                        aliases[alias or segs[-2]] = segs[:-1]
                    else:
                        aliases[alias or segs[-1]] = segs
            self.aliases[mod], self.globs[mod] = aliases, globs
            raw = open(p, encoding='utf-8').read()
            for m in MACRO.finditer(raw):
                self.macros[m.group(1)] = p

    def absolute(self, here, segs):
        """Segments as an absolute path from the crate root, or None (another crate)."""
        first = segs[0]
        if first == 'crate':
            return list(segs[1:])
        if first == 'self':
            return list(here) + list(segs[1:])
        if first == 'super':
            mod, i = list(here), 0
            while i < len(segs) and segs[i] == 'super':
                mod, i = mod[:-1], i + 1
            return mod + list(segs[i:])
        if tuple(here) + (first,) in self.files:
            return list(here) + list(segs)
        return None

    def named(self, segs):
        """The file of the deepest module the path names."""
        mod = ()
        for s in segs:
            if mod + (s,) not in self.files:
                break
            mod += (s,)
        if mod == () and segs and segs[0] in self.macros:
            return self.macros[segs[0]]
        return self.files[mod]

    def defining(self, segs, seen=None):
        """The file that defines the item the path names (re-exports followed)."""
        seen = seen if seen is not None else set()
        if tuple(segs) in seen:
            return None
        seen.add(tuple(segs))
        mod = ()
        for i, s in enumerate(segs):
            if mod + (s,) in self.files:
                mod += (s,)
                continue
            if s in self.items.get(mod, ()):
                return self.files[mod]
            if mod == () and s in self.macros:
                return self.macros[s]
            target = self.aliases.get(mod, {}).get(s)
            if target is not None:
                whole = self.absolute(mod, target)
                found = whole is not None and self.defining(whole + list(segs[i + 1:]), seen)
                return found or self.files[mod]
            for glob in self.globs.get(mod, ()):
                whole = self.absolute(mod, glob)
                if whole is None:
                    continue
                inner = tuple(whole)
                if s in self.items.get(inner, ()) or s in self.aliases.get(inner, {}) \
                        or inner + (s,) in self.files:
                    found = self.defining(whole + list(segs[i:]), seen)
                    if found:
                        return found
            return self.files[mod]
        return self.files[mod]

    def imports(self):
        """{file: {file it names: [lines]}}, a file's own name left out."""
        edges = {}
        for mod, p in self.files.items():
            src = self.code[p]
            inline = []
            for m in re.finditer(r'\bmod\s+([A-Za-z_]\w*)\s*\{', src):
                start, depth, j = m.end() - 1, 0, m.end() - 1
                while j < len(src):
                    depth += src[j] == '{'
                    depth -= src[j] == '}'
                    if depth == 0:
                        break
                    j += 1
                inline.append((start, j, m.group(1)))

            def here(pos):
                return list(mod) + [name for a, b, name in inline if a < pos < b]

            def add(segs, pos):
                whole = self.absolute(here(pos), segs)
                if whole is None:
                    return
                line = src.count('\n', 0, pos) + 1
                for target in (self.named(whole), self.defining(whole)):
                    if target and target != p:
                        edges.setdefault(p, {}).setdefault(target, []).append(line)

            spans = []
            for m in USE.finditer(src):
                spans.append((m.start(), m.end()))
                for segs, _ in use_paths(m.group(1)):
                    while segs and segs[-1] in ('*', 'self'):
                        segs = segs[:-1]
                    if segs:
                        add(segs, m.start())
            for m in PATH.finditer(src):
                if not any(a <= m.start() < b for a, b in spans):
                    add(m.group(1).split('::'), m.start())
        return edges


def read_table(path):
    table = {}
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        room, _, allowed = line.partition(':')
        table[room.strip()] = set(allowed.split())
    return table


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    sys.setrecursionlimit(100000)
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def main():
    table = read_table(sys.argv[1])
    crate = Crate()
    edges = crate.imports()
    failed = False

    unknown_rooms = {room_of(p) for p in crate.files.values()} - set(table) - {'lib'}
    for room in sorted(unknown_rooms):
        print(f'src/{room}: a room the floors table does not name; give it a row', file=sys.stderr)
        failed = True
    for room, allowed in sorted(table.items()):
        for other in sorted(allowed - set(table)):
            print(f'floors table: `{room}` may import `{other}`, which is no room', file=sys.stderr)
            failed = True
    for comp in circles(table):
        print('floors table: these rooms may import each other in a circle: ' + ', '.join(comp), file=sys.stderr)
        failed = True
    if '--doc' in sys.argv:
        doc = sys.argv[sys.argv.index('--doc') + 1]
        floor = {}
        for line in open(doc, encoding='utf-8'):
            m = re.match(r'\|\s*(\d+)\s*\|\s*`([a-z_]+)`\s*\|', line)
            if m:
                floor[m.group(2)] = int(m.group(1))
        for room, allowed in sorted(table.items()):
            for other in sorted(allowed):
                if room not in floor or other not in floor or floor[other] >= floor[room]:
                    print(f'{doc}: `{room}` (floor {floor.get(room)}) may import `{other}` '
                          f'(floor {floor.get(other)}), which is not below it', file=sys.stderr)
                    failed = True

    rooms = {}
    for src, targets in sorted(edges.items()):
        for dst, lines in sorted(targets.items()):
            a, b = room_of(src), room_of(dst)
            if a == b or b == 'lib':
                continue
            rooms.setdefault((a, b), []).append(f'{src}:{lines[0]}')
            if b not in table.get(a, set()):
                print(f'{src}:{lines[0]}: `{a}` imports `{b}` ({dst}), which the floors table does not allow', file=sys.stderr)
                failed = True

    def contains(a, b):
        ma, mb = module_of(a), module_of(b)
        return mb[:len(ma)] == ma or ma[:len(mb)] == mb

    files = {a: {b for b in bs if not contains(a, b)} for a, bs in edges.items()}
    found = circles(files)
    for comp in found:
        links = [f'{a}:{edges[a][b][0]} -> {b}' for a in comp for b in sorted(files.get(a, ())) if b in comp]
        print('a circle of imports between files: ' + '; '.join(links), file=sys.stderr)
        failed = True

    if '--edges' in sys.argv:
        for (a, b), where in sorted(rooms.items()):
            print(f'{a} -> {b}: {len(where)} files, e.g. {where[0]}')
    if '--circles' in sys.argv:
        print(f'{len(found)} file circles')
    if failed:
        sys.exit(1)
    print(f'floors: {len(crate.files)} files, {sum(len(v) for v in edges.values())} imports between them, '
          f'{len(rooms)} between rooms, each allowed by the table; no circle between files')


if __name__ == '__main__':
    main()
