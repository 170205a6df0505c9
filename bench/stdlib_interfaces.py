#!/usr/bin/env python3
"""Compare the component interfaces of the public Dyad standard library with ours.

usage: bench/stdlib_interfaces.py PUBLIC_STDLIB_DIR [OUR_STDLIB_DIR] [LIB...]

PUBLIC_STDLIB_DIR holds the public library folders (Dyad, BlockComponents,
...); it is only read.  OUR_STDLIB_DIR defaults to stdlib/ beside this
script's folder.  For every non-test, non-example component of each library
(default: BlockComponents ElectricalComponents TranslationalComponents
RotationalComponents ThermalComponents) the interface is read from the source
text, inherited parts (`extends`) included: the parameters (names) and the
connectors (names and connector types).  Prints one line per public
component that is missing in ours or differs, and a summary; exit 1 if any.

The reading is textual (two-space indented declarations up to `relations`),
which is how both libraries are written; it does not evaluate modifiers.
"""
import os
import re
import sys

LIBS = ["BlockComponents", "ElectricalComponents", "TranslationalComponents",
        "RotationalComponents", "ThermalComponents"]
DEF = re.compile(r"^(partial |example |test |external )?(component|connector) (\w+)\s*(?:=.*)?$")
PARAM = re.compile(r"^  (?:final |structural )*parameter (\w+)")
INST = re.compile(r"^  (\w+)(?:::[\w.]+)? = \[?\s*([\w.]+)")
EXT = re.compile(r"^  extends ([\w.]+)")


def read_lib(root, lib):
    """{name: def} of one library folder (sub-folders: sub-libraries, same names)."""
    defs = {}
    for dirpath, _, files in os.walk(os.path.join(root, lib)):
        for f in sorted(files):
            if f.endswith(".dyad"):
                read_file(os.path.join(dirpath, f), defs)
    return defs


def read_file(path, defs):
    cur = None
    for line in open(path, encoding="utf-8"):
        m = DEF.match(line)
        if m:
            cur = {"prefix": (m.group(1) or "").strip(), "kind": m.group(2), "params": set(),
                   "insts": {}, "extends": [], "body": True, "path": path}
            defs.setdefault(m.group(3), cur)
            continue
        if cur is None:
            continue
        if line.startswith("end") or line.startswith("metadata"):
            cur = None
        elif line.startswith("relations"):
            cur["body"] = False
        elif cur["body"]:
            if PARAM.match(line):
                cur["params"].add(PARAM.match(line).group(1))
            elif EXT.match(line):
                cur["extends"].append(EXT.match(line).group(1).split(".")[-1])
            elif INST.match(line) and not line.startswith("  variable"):
                m = INST.match(line)
                cur["insts"][m.group(1)] = m.group(2).split(".")[-1]


def interface(name, defs, connectors, seen=()):
    """(parameters, {connector: type}) of a definition, bases included."""
    d = defs.get(name)
    if d is None or name in seen:
        return set(), {}
    params, conns = set(d["params"]), {}
    for base in d["extends"]:
        p, c = interface(base, defs, connectors, seen + (name,))
        params |= p
        conns.update(c)
    conns.update({k: v for k, v in d["insts"].items() if v in connectors})
    return params, conns


def load(root, libs):
    alldefs = {}
    for lib in ["Dyad"] + libs:
        alldefs[lib] = read_lib(root, lib)
    connectors = {n for defs in alldefs.values() for n, d in defs.items() if d["kind"] == "connector"}
    return alldefs, connectors


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pub = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "stdlib")
    libs = sys.argv[3:] or LIBS
    pdefs, pconn = load(pub, libs)
    odefs, oconn = load(ours, libs)
    missing = differ = same = 0
    for lib in libs:
        merged_p = {**pdefs["Dyad"], **pdefs[lib]}
        merged_o = {**odefs["Dyad"], **odefs[lib]}
        for name, d in sorted(pdefs[lib].items()):
            if d["kind"] != "component" or d["prefix"] in ("test", "example"):
                continue
            if name not in odefs[lib]:
                print(f"MISSING  {lib}.{name}  ({os.path.relpath(d['path'], pub)})")
                missing += 1
                continue
            pp, pc = interface(name, merged_p, pconn)
            op, oc = interface(name, merged_o, oconn)
            notes = []
            if pp != op:
                notes.append(f"parameters only public {sorted(pp - op)}, only ours {sorted(op - pp)}")
            if pc != oc:
                only_p = {k: v for k, v in pc.items() if oc.get(k) != v}
                only_o = {k: v for k, v in oc.items() if pc.get(k) != v}
                notes.append(f"connectors public {only_p}, ours {only_o}")
            if notes:
                print(f"DIFFERS  {lib}.{name}: " + "; ".join(notes))
                differ += 1
            else:
                same += 1
    print(f"{same} same, {differ} differ, {missing} missing")
    sys.exit(1 if missing or differ else 0)


if __name__ == "__main__":
    main()
