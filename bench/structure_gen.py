#!/usr/bin/env python3
"""structure_gen.py -- a scalable model for the structure-phase benchmark.

Usage: structure_gen.py N > model.dyad   (the model is called StructBench)

N sections of a ladder, written as plain components with every instance and
connect spelled out (so alias elimination sees what real acausal models
give it: most equations are connection aliases):

  node[i-1] --R-- mid --D-- node[i],  node[i] --C-- ground[i]

R a linear resistor, D a nonlinear conductance i = G*(v + v^3), C a
capacitor: the voltage of `mid` is fixed by a nonlinear algebraic equation
per section (a BLT block that is not an explicit assignment) and every
capacitor voltage is a state.  Each section has its own ground (one
shared ground would make one connection equation with N terms).  About 20
flat equations per section.
"""
import sys

LIB = """\
connector Pin
  potential v::Real
  flow i::Real
end

component Ground
  p = Pin()
relations
  p.v = 0
end

component Resistor
  p = Pin()
  n = Pin()
  parameter R::Real = 1
relations
  p.v - n.v = R * p.i
  p.i + n.i = 0
end

component Conductance
  p = Pin()
  n = Pin()
  parameter G::Real = 1
  variable v::Real
relations
  v = p.v - n.v
  p.i = G * (v + v^3)
  p.i + n.i = 0
end

component Capacitor
  p = Pin()
  n = Pin()
  parameter C::Real = 1
  variable v::Real
relations
  v = p.v - n.v
  C * der(v) = p.i
  p.i + n.i = 0
end

component Source
  p = Pin()
  n = Pin()
  parameter V::Real = 1
relations
  p.v - n.v = V
  p.i + n.i = 0
end
"""


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    out = [LIB, "component StructBench", "  src = Source()", "  gnd = Ground()"]
    for i in range(1, n + 1):
        out.append(f"  r{i} = Resistor()\n  d{i} = Conductance()\n  c{i} = Capacitor()\n  g{i} = Ground()")
    out.append("relations")
    out.append("  connect(src.n, gnd.p)")
    prev = "src.p"
    for i in range(1, n + 1):
        out.append(f"  connect({prev}, r{i}.p)\n  connect(r{i}.n, d{i}.p)\n"
                   f"  connect(d{i}.n, c{i}.p)\n  connect(c{i}.n, g{i}.p)")
        prev = f"c{i}.p"
    out.append("end")
    sys.stdout.write("\n".join(out) + "\n")


main()
