// Coverage from the end of the first reset on (DPI-C of tb/core/vta_tb_top.sv).
//
// The model powers up with random register values (+verilator+rand+reset+2): Verilator's settle
// evaluates the combinational logic on them (a case item of a random state counts as a line hit)
// and the first reset moves them to their reset values (a high address bit the design never
// drives counts a toggle). That is no activity of the design. The design's constant logic, in
// turn, is evaluated once, before any initial block (vta_span_mask's decoders, the adder tree's
// loops): its lines are hit then or never. So the bench top calls coverage_start() from an
// initial block and coverage_first_reset() on the first clock edge after its first reset, each
// writing the counts then beside the coverage file (FILE.start, FILE.reset), and coverage_final()
// from a final block, which runs before the harness writes the coverage file: it writes FILE
// itself, every line, branch and toggle count less what was counted between the two (cover
// points, off until the first reset, as they are), and points the harness's own write at FILE.raw.
// Builds without coverage do nothing.

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

std::string g_start_file;  // the counts before the settle ("" before coverage_start)
std::string g_reset_file;  // the counts at the end of the first reset ("" before it)

// A point's line "C '<key>' <count>": true with its key and count.
bool parse_point(const std::string& line, std::string& key, uint64_t& count) {
    const size_t end = line.rfind("' ");
    if (line.compare(0, 3, "C '") != 0 || end == std::string::npos || end < 3) return false;
    key = line.substr(3, end - 3);
    count = std::stoull(line.substr(end + 2));
    return true;
}

// Line, branch and toggle points (not the cover points of --coverage-user).
bool is_design_activity(const std::string& key) {
    for (const char* page : {"\001page\002v_line/", "\001page\002v_branch/",
                             "\001page\002v_toggle/"})
        if (key.find(page) != std::string::npos) return true;
    return false;
}

// key -> count of the points is_design_activity() takes, from a coverage file.
std::unordered_map<std::string, uint64_t> read_counts(const std::string& path) {
    std::unordered_map<std::string, uint64_t> out;
    std::ifstream in(path);
    std::string line, key;
    uint64_t count = 0;
    while (std::getline(in, line))
        if (parse_point(line, key, count) && is_design_activity(key)) out[key] = count;
    return out;
}

std::string snapshot(const char* suffix) {
    const std::string path = Verilated::threadContextp()->coverageFilename() + suffix;
    VerilatedCov::write(path);
    return path;
}

}  // namespace
#endif

extern "C" {

void coverage_start() {
#if VM_COVERAGE
    g_start_file = snapshot(".start");
#endif
}

void coverage_first_reset() {
#if VM_COVERAGE
    g_reset_file = snapshot(".reset");
#endif
}

void coverage_final() {
#if VM_COVERAGE
    if (g_start_file.empty() || g_reset_file.empty()) return;  // the harness writes them as they are
    VerilatedContext* ctx = Verilated::threadContextp();
    const std::string out = ctx->coverageFilename();
    const std::string raw = snapshot(".raw");
    const auto at_start = read_counts(g_start_file);
    const auto at_reset = read_counts(g_reset_file);
    std::ifstream in(raw);
    std::ofstream dst(out, std::ios::trunc);
    std::string line, key;
    uint64_t count = 0;
    while (std::getline(in, line)) {
        if (parse_point(line, key, count) && is_design_activity(key)) {
            const auto s = at_start.find(key);
            const auto r = at_reset.find(key);
            const uint64_t before = s == at_start.end() ? 0 : s->second;
            const uint64_t powerup = (r == at_reset.end() ? 0 : r->second) - before;
            dst << "C '" << key << "' " << (count > powerup ? count - powerup : 0) << "\n";
        } else {
            dst << line << "\n";
        }
    }
    ctx->coverageFilename(raw);  // the harness writes after this: beside, not over
    std::remove(g_start_file.c_str());
    std::remove(g_reset_file.c_str());
#endif
}

}  // extern "C"
