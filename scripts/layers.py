#!/usr/bin/env python3
"""Draws a crate's module-import graph from its `crate::`/`super::` paths.

Prints the floors (each module sits one floor above the highest module it imports; a circle
shares one floor), the imports that run back up against the declared layers (LAYERS below), and
the import circles. Usage: scripts/layers.py [service/server/src] [--edges]
"""

import os
import re
import sys

# The intended layers of bete-server, lowest first: a module may import its own layer or lower.
# A module not named here (by itself or an ancestor) is reported as "unlayered".
LAYERS = [
    ("base", ["clock", "seed", "ids", "metrics", "trace", "names", "progress", "store", "status",
              "shutdown", "coalesce"]),
    ("table", ["table", "registry", "stream", "project", "deadline", "analysis"]),
    ("cluster", ["cluster", "leadership"]),
    ("ladder", ["ladder"]),
    ("edge", ["config", "auth", "limits", "conn", "edge", "tls", "admin", "web", "web_mux",
              "serve", "accounts", "forward", "submits", "service", "server", "invitation",
              "showcase", "replay", "counts", "main"]),
]


def modules(root):
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
            if rel in (["lib"], ["main"]):
                name = rel[0]
            else:
                name = "::".join(rel)
            mods[name] = path
    return mods


PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")


def strip_tests(text):
    # Test modules import freely; the layering is about the code that ships.
    out = re.split(r"\n#\[cfg\(test\)\]\s*\nmod tests\s*\{", text)
    return out[0]


def expand(text):
    """Yields module paths named in `use` trees (brace groups expanded) and inline paths."""
    # Flatten `use a::{b::{c, d}, e}` into a::b::c, a::b::d, a::e.
    for m in re.finditer(r"\buse\s+((?:crate|super)[^;]*);", text, re.S):
        yield from flatten(re.sub(r"\s+", "", m.group(1)))
    body = re.sub(r"\buse\s+[^;]*;", "", text, flags=re.S)
    for m in PATH.finditer(body):
        if m.group(2) != "::{":
            yield m.group(1) + m.group(2)


def flatten(tree):
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


def resolve(path, here, mods):
    segs = path.split("::")
    if segs[0] == "super":
        base = here.split("::")[:-1] if here not in ("lib", "main") else []
        # A mod.rs's `super` is its parent's parent; modules() names mod.rs by its directory.
        if mods.get(here, "").endswith("mod.rs"):
            base = here.split("::")[:-1]
        while segs and segs[0] == "super":
            segs = segs[1:]
        segs = base + segs
    else:
        segs = segs[1:]
    for n in range(len(segs), 0, -1):
        cand = "::".join(segs[:n])
        if cand in mods:
            return cand
    return None


def layer_of(mod):
    top = mod.split("::")[0]
    for i, (_, names) in enumerate(LAYERS):
        if mod in names or top in names:
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
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else "service/server/src"
    mods = modules(root)
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        with open(path) as f:
            text = strip_tests(f.read())
        found = list(expand(text))
        # A module depends on the children it declares (`mod actor;`): they are its parts,
        # and what they import, it imports. The crate root is left out (it declares all).
        if path.endswith("mod.rs"):
            for child in mods:
                if child.startswith(m + "::") and "::" not in child[len(m) + 2 :]:
                    found.append("crate::" + child)
        for p in found:
            t = resolve(p, m, mods)
            if t and t != m and not m.startswith(t + "::") and t not in ("lib",):
                graph[m].add(t)
    comps = sccs(graph)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    floor = {}
    for i, c in enumerate(comps):  # Tarjan emits a component after all it reaches
        deps = {comp_of[w] for v in c for w in graph[v]} - {i}
        floor[i] = 1 + max((floor[d] for d in deps), default=-1)
    edges = sum(len(s) for s in graph.values())
    print(f"{len(mods)} modules, {edges} imports, {max(floor.values()) + 1} floors")
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
    unl = sorted(m for m in mods if layer_of(m) is None)
    if unl:
        print("unlayered: " + " ".join(unl))
    circles = [c for c in comps if len(c) > 1]
    print(f"circles: {len(circles)}")
    for c in circles:
        print("  " + " <-> ".join(c))
    if "--edges" in sys.argv:
        for m in sorted(graph):
            print(f"{m} -> {' '.join(sorted(graph[m]))}")
    return 1 if circles and "--strict" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
