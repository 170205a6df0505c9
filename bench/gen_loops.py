#!/usr/bin/env python3
"""gen_loops.py -- scalable benchmark models written with `for` loops over
array variables (issue 13's "written with for loops" targets).

Usage: gen_loops.py rc N > model.dyad       (model RcLoop, 2N equations)
       gen_loops.py heat3d N > model.dyad   (model Heat3D, N^3 cells)

  rc      the RC ladder of the hand-written baseline (ida_chain.c `rc`, and
          gen_chain.py rc written as components): a 1 V source, N sections
          of a series resistor R = 1 and a capacitor C = 1 to ground; the N
          capacitor voltages v and the N resistor currents i are arrays.
          Checksum: sum(v) at t = 10 is 3.09061 for N >= 100, as the
          baseline's.
  heat3d  heat conduction in a cube of N x N x N cells (capacity C = 1,
          conductance G = 1 between face neighbours, insulated faces), a
          unit heat flow into the corner cell [1, 1, 1]; one equation per
          cell, the boundary handled by structural `if` expressions.
          Checksum: sum(T) = t (the energy put in).
"""
import sys

RC = """\
component RcLoop
  structural parameter N::Integer = {n}
  parameter R::Real = 1
  parameter C::Real = 1
  variable v::Real[N]
  variable i::Real[N]
relations
  i[1] = (1 - v[1]) / R
  for k in 2:N
    i[k] = (v[k - 1] - v[k]) / R
  end
  for k in 1:N - 1
    C * der(v[k]) = i[k] - i[k + 1]
  end
  C * der(v[N]) = i[N]
  for k in 1:N
    initial v[k] = 0
  end
end
"""

HEAT3D = """\
component Heat3D
  structural parameter N::Integer = {n}
  parameter G::Real = 1
  parameter C::Real = 1
  variable T::Real[N, N, N]
relations
  for i in 1:N, j in 1:N, k in 1:N
    C * der(T[i, j, k]) = (if i > 1 then G * (T[i - 1, j, k] - T[i, j, k]) else 0)
      + (if i < N then G * (T[i + 1, j, k] - T[i, j, k]) else 0)
      + (if j > 1 then G * (T[i, j - 1, k] - T[i, j, k]) else 0)
      + (if j < N then G * (T[i, j + 1, k] - T[i, j, k]) else 0)
      + (if k > 1 then G * (T[i, j, k - 1] - T[i, j, k]) else 0)
      + (if k < N then G * (T[i, j, k + 1] - T[i, j, k]) else 0)
      + (if i == 1 and j == 1 and k == 1 then 1 else 0)
    initial T[i, j, k] = 0
  end
end
"""


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("rc", "heat3d"):
        sys.exit("usage: gen_loops.py rc|heat3d N")
    n = int(sys.argv[2])
    sys.stdout.write((RC if sys.argv[1] == "rc" else HEAT3D).format(n=n))


if __name__ == "__main__":
    main()
