// Toggle coverage from the end of the first reset on (DPI-C of tb/core/vta_tb_top.sv).
//
// The model powers up with random register values (+verilator+rand+reset+2) and the first reset
// moves them to their reset values: toggle coverage counts that as activity (a high address bit
// the design never drives shows 0->1 and 1->0 in every process). Zeroing every counter there would
// lose the line and branch points of constant logic, which Verilator evaluates once, at
// initialisation. So the bench top calls coverage_first_reset() on the first clock edge after its
// first reset (it writes the counts then beside the coverage file, FILE.reset), and
// coverage_final() from a final block, which runs before the harness writes the coverage file:
// it writes FILE itself, every count as it stands except toggle counts, less their value at the
// first reset, and points the harness's own write at FILE.raw. Builds without coverage do nothing.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <unordered_map>

#include "svdpi.h"
#include "Vtop__Dpi.h"  // prototypes Verilator generates from the imports: checks the signatures

#if VM_COVERAGE
#include "verilated.h"
#include "verilated_cov.h"

namespace {

std::string g_reset_file;  // the counts at the end of the first reset ("" before it)

// A point's line "C '<key>' <count>": true with its key and count.
bool parse_point(const std::string& line, std::string& key, uint64_t& count) {
    const size_t end = line.rfind("' ");
    if (line.compare(0, 3, "C '") != 0 || end == std::string::npos || end < 3) return false;
    key = line.substr(3, end - 3);
    count = std::stoull(line.substr(end + 2));
    return true;
}

bool is_toggle(const std::string& key) {
    return key.find("\001page\002v_toggle/") != std::string::npos;
}

}  // namespace
#endif

extern "C" {

void coverage_first_reset() {
#if VM_COVERAGE
    g_reset_file = Verilated::threadContextp()->coverageFilename() + ".reset";
    VerilatedCov::write(g_reset_file);
#endif
}

void coverage_final() {
#if VM_COVERAGE
    if (g_reset_file.empty()) return;  // no reset ended: the harness writes the counts as they are
    VerilatedContext* ctx = Verilated::threadContextp();
    const std::string out = ctx->coverageFilename();
    const std::string raw = out + ".raw";
    VerilatedCov::write(raw);
    std::unordered_map<std::string, uint64_t> at_reset;
    std::string line, key;
    uint64_t count = 0;
    {
        std::ifstream in(g_reset_file);
        while (std::getline(in, line))
            if (parse_point(line, key, count) && is_toggle(key)) at_reset[key] = count;
    }
    std::ifstream in(raw);
    std::ofstream dst(out, std::ios::trunc);
    while (std::getline(in, line)) {
        if (parse_point(line, key, count) && is_toggle(key)) {
            const auto it = at_reset.find(key);
            const uint64_t before = it == at_reset.end() ? 0 : it->second;
            dst << "C '" << key << "' " << (count > before ? count - before : 0) << "\n";
        } else {
            dst << line << "\n";
        }
    }
    ctx->coverageFilename(raw);  // the harness writes after this: beside, not over
    std::remove(g_reset_file.c_str());
#endif
}

}  // extern "C"
