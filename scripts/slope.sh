#!/bin/bash
# slope.sh LABEL N1 N2 CMD... : µs a call, the slope between N1 and N2 calls (start-up excluded)
t1() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e-$s" | bc -l; }
L=$1; A=$2; B=$3; shift 3
a=$(t1 "$@" $A); b=$(t1 "$@" $B)
echo "$L: $(echo "($b-$a)*1000000/($B-$A)" | bc -l | cut -c1-5) µs a call"
