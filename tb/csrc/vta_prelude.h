// Force-included (g++ -include) before every C++ file of the Verilated bench.
// glibc's <stdint.h> defines SIZE_WIDTH (C2x, enabled by g++'s implicit _GNU_SOURCE); the
// generated package vta_pkg has a parameter of that name, which Verilator emits as a C++
// member (the runner's --public-flat-rw makes it public), so the macro would break the build.
// Including stdint.h first (it has an include guard) and removing the macro avoids the clash.
#include <stdint.h>
#undef SIZE_WIDTH
