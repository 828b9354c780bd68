#!/usr/bin/env python3
"""Draws the service's module-import graph across its crates (bete-base, bete-table,
bete-cluster, bete-ladder-runtime, bete-server), from their `crate::`, `super::` and
`bete_*::` paths.

Prints the floors (each module sits one floor above the highest module it imports; a circle
shares one floor), the imports that run back up against the declared layers (LAYERS below, one
crate each; exits non-zero if there is one), and the import circles. Cargo forbids a circle
between crates, so every circle lies inside one crate, where circles are allowed. A crate whose
root is a concern's own module (bete-table's root is the table: `Handle`, `TableMeta`) counts
that root as a module: a child importing its items and the root re-exporting the child's is a
circle inside the crate. Usage: scripts/layers.py [--edges] [--strict: circles fail too]
"""

import os
import re
import sys

# The service's crates above bete-store, lowest first, each a layer: a crate may import its
# own layer or lower. A module is named `<layer>::<path>`; a crate whose root is one concern's
# module (bete-table's lib.rs is the table, bete-ladder-runtime's the ladder) is its layer's name.
LAYERS = [
    ("base", "bete_base", "service/base/src"),
    ("table", "bete_table", "service/table/src"),
    ("cluster", "bete_cluster", "service/cluster/src"),
    ("ladder", "bete_ladder_runtime", "service/ladder-runtime/src"),
    ("edge", "bete_server", "service/server/src"),
]
# Crate roots that only declare their crate's modules: not modules of their own.
DECLARERS = ["base", "edge"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def modules(layer, root):
    """Maps `<layer>::<path>` (the crate root is `<layer>`) to its file."""
    mods = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel[-1] == "tests":  # a test module's file: tests import freely
                continue
            if rel in (["lib"],):
                rel = []
            mods["::".join([layer] + rel)] = path
    return mods


PATH = re.compile(r"(?<![\w$])(crate|super|bete_[a-z_]+)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")
USE = re.compile(r"\b(?:pub\s+)?use\s+((?:crate|super|bete_[a-z_]+)[^;]*);", re.S)


def strip_tests(text):
    # Test modules import freely; the layering is about the code that ships.
    out = re.split(r"\n#\[cfg\(test\)\]\s*\nmod tests\s*\{", text)
    return out[0]


def expand(text):
    """Yields module paths named in `use` trees (brace groups expanded) and inline paths."""
    # Flatten `use a::{b::{c, d}, e}` into a::b::c, a::b::d, a::e.
    for m in USE.finditer(text):
        yield from flatten(re.sub(r"\s+", "", m.group(1)))
    body = re.sub(r"\buse\s+[^;]*;", "", text, flags=re.S)
    for m in PATH.finditer(body):
        if m.group(2) != "::{":
            yield m.group(1) + m.group(2)


def flatten(tree):
    tree = re.sub(r"\bas[A-Za-z_][A-Za-z0-9_]*$", "", tree)
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        out.extend(flatten(prefix + p) if p != "self" else [prefix.rstrip(":")])
    return out


def resolve(path, here, mods, crates):
    segs = path.split("::")
    layer = here.split("::")[0]
    if segs[0] == "super":
        base = here.split("::")[:-1]
        # A mod.rs's `super` is its parent's parent; modules() names mod.rs by its directory.
        if mods.get(here, "").endswith("mod.rs"):
            base = here.split("::")[:-1]
        while segs and segs[0] == "super":
            segs = segs[1:]
        segs = base + segs
    elif segs[0] == "crate":
        segs = [layer] + segs[1:]
    elif segs[0] in crates:
        segs = [crates[segs[0]]] + segs[1:]
    else:
        return None  # a crate outside the layers (bete_store, bete_rules, ...)
    for n in range(len(segs), 0, -1):
        cand = "::".join(segs[:n])
        if cand in mods:
            return cand
    return None


def layer_of(mod):
    top = mod.split("::")[0]
    for i, (name, _, _) in enumerate(LAYERS):
        if top == name:
            return i
    return None


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    mods = {}
    for name, _, src in LAYERS:
        mods.update(modules(name, os.path.join(ROOT, src)))
    crates = {ident: name for name, ident, _ in LAYERS}
    roots = {name for name, _, _ in LAYERS} - set(DECLARERS)
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        if m in DECLARERS:
            continue
        with open(path) as f:
            text = strip_tests(f.read())
        found = list(expand(text))
        # A module depends on the children it declares (`mod watch;`): they are its parts,
        # and what they import, it imports; a child's `super::` back to them is no import.
        # A crate root is not one of those parts: bete-base's and bete-server's only declare
        # their modules and are left out; the table's, the cluster's and the ladder's roots
        # are that concern's own module (`Handle`, `Ladders`), imported like any other.
        if path.endswith("mod.rs") and m not in roots:
            for child in mods:
                if child.startswith(m + "::") and "::" not in child[len(m) + 2 :]:
                    found.append(child)
        # `use actor::{...}`: a path from this module's own child (a crate root's re-exports).
        for c in re.findall(r"\buse\s+([a-z_][a-z0-9_]*)::", text):
            if f"{m}::{c}" in mods:
                found.append(f"{m}::{c}")
        for p in found:
            t = p if p in mods else resolve(p, m, mods, crates)
            if t is None or t == m or t in DECLARERS:
                continue
            if m.startswith(t + "::") and t not in roots:
                continue
            graph[m].add(t)
    for d in DECLARERS:
        del graph[d]
    comps = sccs(graph)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    floor = {}
    for i, c in enumerate(comps):  # Tarjan emits a component after all it reaches
        deps = {comp_of[w] for v in c for w in graph[v]} - {i}
        floor[i] = 1 + max((floor[d] for d in deps), default=-1)
    edges = sum(len(s) for s in graph.values())
    print(f"{len(mods)} modules in {len(LAYERS)} crates, {edges} imports, "
          f"{max(floor.values()) + 1} floors")
    for f in range(max(floor.values()) + 1):
        names = sorted(v for i, c in enumerate(comps) if floor[i] == f for v in c)
        print(f"  floor {f:2}: {' '.join(names)}")
    up = []
    for m in sorted(graph):
        for t in sorted(graph[m]):
            lm, lt = layer_of(m), layer_of(t)
            if lm is not None and lt is not None and lt > lm:
                up.append(f"{m} ({LAYERS[lm][0]}) -> {t} ({LAYERS[lt][0]})")
    print(f"upward imports (against LAYERS): {len(up)}")
    for u in up:
        print("  " + u)
    circles = [c for c in comps if len(c) > 1]
    print(f"circles: {len(circles)} (each inside one crate)")
    for c in circles:
        print("  " + " <-> ".join(c))
    if "--edges" in sys.argv:
        for m in sorted(graph):
            print(f"{m} -> {' '.join(sorted(graph[m]))}")
    return 1 if (up or (circles and "--strict" in sys.argv)) else 0


if __name__ == "__main__":
    sys.exit(main())
