#!/usr/bin/env python3
"""gen_chain.py -- write a scalable benchmark model as plain Dyad components.

Usage: gen_chain.py msd|rc N > model.dyad   (the model is called Chain)

Same physics as the hand-written baseline (/work/shared/bench/baseline,
ida_chain.c), all parameters 1 unless stated, a unit step at t = 0 on a
system at rest:

  msd  N masses (m = 1) in a chain; between neighbours, and between the wall
       and mass 1, a spring K = 1 and a damper D = 0.1 in parallel; a unit
       force on mass N.  Checksum: the sum of the mass positions.
  rc   RC ladder: a 1 V source, then N sections of a series resistor R = 1
       and a capacitor C = 1 to ground.  Checksum: the sum of the capacitor
       voltages.

Every instance and every connect is written out (no arrays), so the model has
N explicit component instances per kind.
"""
import sys

MSD_LIB = """\
connector Flange
  potential s::Real
  flow f::Real
end

component Wall
  flange = Flange()
relations
  flange.s = 0
end

component Mass
  flange = Flange()
  parameter m::Real = 1
  variable s::Real
  variable v::Real
relations
  s = flange.s
  der(s) = v
  m * der(v) = flange.f
end

component SpringDamper
  flange_a = Flange()
  flange_b = Flange()
  parameter k::Real = 1
  parameter d::Real = 0.1
  variable s_rel::Real
  variable f::Real
relations
  s_rel = flange_b.s - flange_a.s
  f = k * s_rel + d * der(s_rel)
  flange_b.f = f
  flange_a.f = -f
end

component Force
  flange = Flange()
  parameter F::Real = 1
relations
  flange.f = -F
end
"""

RC_LIB = """\
connector Pin
  potential v::Real
  flow i::Real
end

component Ground
  g = Pin()
relations
  g.v = 0
end

component Source
  p = Pin()
  n = Pin()
  parameter V::Real = 1
relations
  p.v - n.v = V
  p.i + n.i = 0
end

component Resistor
  p = Pin()
  n = Pin()
  parameter R::Real = 1
  variable i::Real
relations
  p.v - n.v = R * i
  p.i = i
  n.i = -i
end

component Capacitor
  p = Pin()
  n = Pin()
  parameter C::Real = 1
  variable v::Real
relations
  v = p.v - n.v
  C * der(v) = p.i
  n.i = -p.i
end
"""


def msd(n):
    out = [MSD_LIB, "component Chain", "  wall = Wall()", "  force = Force()"]
    for k in range(1, n + 1):
        out.append(f"  m{k} = Mass()")
        out.append(f"  sd{k} = SpringDamper()")
    out.append("relations")
    for k in range(1, n + 1):
        out.append(f"  initial m{k}.s = 0")
        out.append(f"  initial m{k}.v = 0")
    out.append("  connect(wall.flange, sd1.flange_a)")
    for k in range(1, n + 1):
        if k < n:
            out.append(f"  connect(m{k}.flange, sd{k}.flange_b, sd{k + 1}.flange_a)")
        else:
            out.append(f"  connect(m{k}.flange, sd{k}.flange_b, force.flange)")
    out.append("end")
    return "\n".join(out) + "\n"


def rc(n):
    out = [RC_LIB, "component Chain", "  ground = Ground()", "  source = Source()"]
    for k in range(1, n + 1):
        out.append(f"  r{k} = Resistor()")
        out.append(f"  c{k} = Capacitor()")
    out.append("relations")
    for k in range(1, n + 1):
        out.append(f"  initial c{k}.v = 0")
    out.append("  connect(source.n, ground.g)")
    gnd = ["ground.g"]
    for k in range(1, n + 1):
        left = "source.p" if k == 1 else f"r{k - 1}.n"
        if k == 1:
            out.append(f"  connect(source.p, r1.p)")
        else:
            out.append(f"  connect(r{k - 1}.n, r{k}.p, c{k - 1}.p)")
        gnd.append(f"c{k}.n")
    out.append(f"  connect(r{n}.n, c{n}.p)")
    out.append("  connect(" + ", ".join(gnd) + ")")
    out.append("end")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("msd", "rc"):
        sys.exit("usage: gen_chain.py msd|rc N")
    n = int(sys.argv[2])
    sys.stdout.write(msd(n) if sys.argv[1] == "msd" else rc(n))


if __name__ == "__main__":
    main()
