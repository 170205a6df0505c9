#!/bin/sh
# flatten_gen.sh N -- print a generated Dyad model with about N scalar
# equations, built from `for` loops and a component array:
#   N/4 `Cell` instances (2 equations each, one a derivative) in a
#   comprehension, and two arrays of N/4 elements written with `for` loops
#   (one a running sum over the cells, one an element-wise relation).
n=${1:-1000000}
m=$((n / 4))
cat <<DYAD
component Cell
  parameter k::Real = 1
  variable x::Real
  variable y::Real
relations
  der(x) = -k * x + y
  y = sin(time) - x * x
end

component FlattenBench
  structural parameter M::Integer = $m
  parameter a::Real = 0.5
  cells = [Cell(k = 1 + i / M) for i in 1:M]
  variable s::Real[M]
  variable w::Real[M]
relations
  s[1] = cells[1].x
  for i in 2:M
    s[i] = s[i - 1] + a * cells[i].y
  end
  for i in 1:M
    w[i] = s[i] * cells[i].x
  end
  for i in 1:M
    initial cells[i].x = i / M
  end
end
DYAD
