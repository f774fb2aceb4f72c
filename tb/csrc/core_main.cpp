// The core bench's fast path: a C++ main that runs a batch of programs on the Verilated
// vta_tb_top with no Python and no cocotb in the loop (docs/rtl.md, Simulation speed).
//
// Same contract as the cocotb bench (tb/core/core_bench.py), which vtabench/rtl/simjob.py starts:
// +vta_job=JOB.json names the programs (image and instruction files p<i>.img / p<i>.insn beside
// it, their layout, DRAM knobs, cycle limit, wall-clock limit, seed), +dram_file=FILE the DRAM
// image the DPI model (tb/csrc/dram.cpp) maps; this main maps the same file. The file is a
// window of bus memory at window_base (image_offset, insn_offset: offsets in it; dram_base,
// insn_base, dram_size: the core's inputs, anywhere in the 64-bit bus space). Per program: load
// the image, set the knobs, hold reset 4 cycles, release 2, launch, run until done_o or the cycle
// limit, read the status outputs, write p<i>.out and one JSON line to the results file.
//
// The same cycles as cocotb's: cocotb resumes the bench coroutine after a rising edge has been
// evaluated and its writes take effect before the next one, so this main writes the inputs
// between a rising edge's eval and the falling edge's. A cycle limit (or a wall-clock limit, or
// the owner's death) is noticed where cocotb's Timer fires: at the start of the time step of a
// rising edge, before its eval; that edge is then evaluated after the next program's image is
// loaded, with the old inputs (what cocotb does: the Timer callback loads the image, its writes
// land after the edge). Checks for the wall-clock limit and the owner run every 200,000 cycles,
// as cocotb's chunks.

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"

namespace {

// ---- A small JSON reader (job.json: objects, arrays, strings, numbers, true/false/null) ----

struct Json {
    enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
    double num = 0;
    long long inum = 0;
    bool is_int = false;
    std::string str;
    std::vector<Json> arr;
    std::map<std::string, Json> obj;

    const Json& operator[](const std::string& key) const {
        static const Json none;
        auto it = obj.find(key);
        return it == obj.end() ? none : it->second;
    }
    long long i64() const { return is_int ? inum : static_cast<long long>(num); }
    // a bus address or size: integers up to 2^64 - 1 (i64() holds their bits)
    uint64_t u64() const { return static_cast<uint64_t>(i64()); }
};

class Parser {
  public:
    explicit Parser(const std::string& text) : s_(text) {}
    Json parse() {
        Json v = value();
        ws();
        if (i_ != s_.size()) fail("trailing characters");
        return v;
    }

  private:
    const std::string& s_;
    size_t i_ = 0;

    [[noreturn]] void fail(const char* what) {
        std::fprintf(stderr, "vta_tb_fast: bad job file: %s at byte %zu\n", what, i_);
        std::exit(2);
    }
    void ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool lit(const char* w) {
        size_t n = std::strlen(w);
        if (s_.compare(i_, n, w) != 0) return false;
        i_ += n;
        return true;
    }
    std::string string() {
        std::string out;
        ++i_;  // opening quote
        while (i_ < s_.size() && s_[i_] != '"') {
            char c = s_[i_++];
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            char e = s_[i_++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    if (i_ + 4 > s_.size()) fail("short \\u escape");
                    unsigned cp = std::stoul(s_.substr(i_, 4), nullptr, 16);
                    i_ += 4;
                    if (cp < 0x80) {
                        out += static_cast<char>(cp);
                    } else if (cp < 0x800) {
                        out += static_cast<char>(0xC0 | (cp >> 6));
                        out += static_cast<char>(0x80 | (cp & 0x3F));
                    } else {  // surrogate pairs are kept as two 3-byte sequences (names only)
                        out += static_cast<char>(0xE0 | (cp >> 12));
                        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                        out += static_cast<char>(0x80 | (cp & 0x3F));
                    }
                    break;
                }
                default: out += e;
            }
        }
        if (i_ >= s_.size()) fail("unterminated string");
        ++i_;
        return out;
    }
    Json value() {
        ws();
        if (i_ >= s_.size()) fail("unexpected end");
        Json v;
        char c = s_[i_];
        if (c == '{') {
            v.kind = Json::Obj;
            ++i_;
            ws();
            if (s_[i_] == '}') { ++i_; return v; }
            while (true) {
                ws();
                if (s_[i_] != '"') fail("expected a key");
                std::string k = string();
                ws();
                if (s_[i_++] != ':') fail("expected ':'");
                v.obj[k] = value();
                ws();
                if (s_[i_] == ',') { ++i_; continue; }
                if (s_[i_] == '}') { ++i_; return v; }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            v.kind = Json::Arr;
            ++i_;
            ws();
            if (s_[i_] == ']') { ++i_; return v; }
            while (true) {
                v.arr.push_back(value());
                ws();
                if (s_[i_] == ',') { ++i_; continue; }
                if (s_[i_] == ']') { ++i_; return v; }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            v.kind = Json::Str;
            v.str = string();
            return v;
        }
        if (lit("true")) { v.kind = Json::Bool; v.inum = 1; v.is_int = true; return v; }
        if (lit("false")) { v.kind = Json::Bool; v.is_int = true; return v; }
        if (lit("null")) return v;
        size_t start = i_;
        while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) ||
                                  std::strchr("+-.eE", s_[i_])))
            ++i_;
        if (start == i_) fail("unexpected character");
        std::string tok = s_.substr(start, i_ - start);
        v.kind = Json::Num;
        v.is_int = tok.find_first_of(".eE") == std::string::npos;
        if (v.is_int) {  // bus addresses reach 2^64 - 1: read past 2^63 as unsigned
            v.inum = tok[0] == '-' ? std::stoll(tok)
                                   : static_cast<long long>(std::stoull(tok));
        }
        v.num = std::stod(tok);
        return v;
    }
};

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "vta_tb_fast: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const uint8_t* data, size_t n) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, n, f) != n || std::fclose(f) != 0) {
        std::fprintf(stderr, "vta_tb_fast: cannot write %s\n", path.c_str());
        std::exit(2);
    }
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// ---- The owner process (vtabench.processes.alive: a zombie counts as gone) ----

bool alive(long pid) {
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    size_t paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

void remove_tree(const std::string& folder) {
    std::string cmd = "rm -rf '" + folder + "'";
    if (std::system(cmd.c_str()) != 0)
        std::fprintf(stderr, "vta_tb_fast: cannot remove %s\n", folder.c_str());
}

double seconds(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// ---- The bench ----

constexpr uint64_t CHUNK = 200000;  // cycles between wall-clock / owner checks (cocotb's chunk)

class Bench {
  public:
    Bench(VerilatedContext* ctx, Vtop* top, uint64_t half_period)
        : ctx_(ctx), top_(top), half_(half_period) {}

    // Cocotb's CoreTB.start: inputs at time 0, the clock starts low, two rising edges.
    void start() {
        Vtop& d = *top_;
        d.clk_i = 0;
        d.rst_ni = 0;
        d.launch_i = 0;
        d.insn_count_i = 0;
        d.insn_base_i = 0;
        d.dram_base_i = 0;
        d.dram_size_i = 0;
        d.dram_seed_i = 1;
        d.dram_win_base_i = 0;
        set_knobs(Json(), 1);
        d.eval();
        rise();
        cycle();
    }

    // Evaluate the falling edge (with the inputs written since the last rising edge) and the
    // next rising edge.
    void cycle() {
        fall();
        rise();
    }

    void set_knobs(const Json& k, long long seed) {
        Vtop& d = *top_;
        d.dram_rd_latency_i = static_cast<uint16_t>(k["rd_latency"].i64());
        d.dram_wr_latency_i = static_cast<uint16_t>(k["wr_latency"].i64());
        d.dram_rd_gap_i = static_cast<uint8_t>(k["rd_gap"].i64());
        d.dram_stall_i = static_cast<uint8_t>(k["stall"].i64());
        d.dram_fault_lo_i = k["fault_lo"].u64();
        d.dram_fault_hi_i = k["fault_hi"].u64();
        d.dram_rd_reorder_i = static_cast<uint8_t>(k["rd_reorder"].i64() & 1);
        d.dram_wr_err_burst_i = static_cast<uint32_t>(k["wr_err_burst"].i64());
        uint32_t s = static_cast<uint32_t>(seed & 0xFFFFFFFFll);
        d.dram_seed_i = s ? s : 1;
    }

    // Reset, launch, run to done_o or a limit. Returns the state; waited: cycles from the
    // launch edge. pending_edge_ says the last rising edge reached in time is not evaluated yet.
    std::string run(const Json& p, uint64_t& waited, long owner, const std::string& folder) {
        Vtop& d = *top_;
        if (pending_edge_) {  // the edge at which the previous program's limit was noticed
            cycle();
            pending_edge_ = false;
        }
        set_knobs(p["knobs"], p["seed"].i64());
        d.dram_win_base_i = p["window_base"].u64();
        d.rst_ni = 0;
        d.launch_i = 0;
        for (int i = 0; i < 4; ++i) cycle();
        d.rst_ni = 1;
        for (int i = 0; i < 2; ++i) cycle();
        d.insn_base_i = p["insn_base"].u64();
        d.insn_count_i = static_cast<uint32_t>(p["insn_count"].i64());
        d.dram_base_i = p["dram_base"].u64();
        d.dram_size_i = p["dram_size"].u64();
        cycle();
        d.launch_i = 1;
        cycle();
        d.launch_i = 0;
        const uint64_t max_cycles = static_cast<uint64_t>(p["max_cycles"].i64());
        const Json& tmo = p["timeout_s"];
        const double timeout = tmo.kind == Json::Num ? tmo.num : -1;
        const double wall0 = seconds(CLOCK_MONOTONIC);
        waited = 0;
        if (d.done_o) return "done";
        while (true) {
            if (waited >= max_cycles) return "timeout";
            if (timeout >= 0 && seconds(CLOCK_MONOTONIC) - wall0 > timeout) return "wall-timeout";
            if (owner > 0 && !alive(owner)) {
                remove_tree(folder);  // what the cocotb bench's Orphan does
                std::_Exit(3);
            }
            const uint64_t n = std::min(CHUNK, max_cycles - waited);
            if (pending_edge_) {
                cycle();
                pending_edge_ = false;
                if (d.done_o) return "done";
            }
            for (uint64_t k = 1; k < n; ++k) {
                cycle();
                if (d.done_o) {
                    waited += k;
                    return "done";
                }
            }
            waited += n;
            pending_edge_ = true;
        }
    }

    bool pending_edge() const { return pending_edge_; }

  private:
    VerilatedContext* ctx_;
    Vtop* top_;
    uint64_t half_;
    bool pending_edge_ = false;

    void rise() {
        top_->clk_i = 1;
        top_->eval();
        ctx_->timeInc(half_);
    }
    void fall() {
        top_->clk_i = 0;
        top_->eval();
        ctx_->timeInc(half_);
    }
};

class Dram {
  public:
    explicit Dram(const std::string& path) {
        int fd = open(path.c_str(), O_RDWR);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            std::fprintf(stderr, "vta_tb_fast: cannot open the DRAM file %s\n", path.c_str());
            std::exit(2);
        }
        size_ = static_cast<size_t>(st.st_size);
        void* m = size_ ? mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                        : nullptr;
        close(fd);
        if (m == MAP_FAILED) {
            std::fprintf(stderr, "vta_tb_fast: cannot map the DRAM file %s\n", path.c_str());
            std::exit(2);
        }
        mem_ = static_cast<uint8_t*>(m);
    }
    uint8_t* data() { return mem_; }
    size_t size() const { return size_; }

  private:
    uint8_t* mem_ = nullptr;
    size_t size_ = 0;
};

struct Output {
    const char* name;
    uint64_t value;
};

}  // namespace

int main(int argc, char** argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    std::string job_path = ctx->commandArgsPlusMatch("vta_job=");
    if (job_path.empty()) {
        std::fprintf(stderr, "usage: %s +vta_job=JOB.json +dram_file=FILE [+vta_trace=FILE] "
                     "[+verilator+...]\n", argv[0]);
        return 2;
    }
    job_path = job_path.substr(std::strlen("+vta_job="));
    const std::string text = read_file(job_path);
    const Json job = Parser(text).parse();
    const std::string base = job_path.substr(0, job_path.rfind('/') + 1);
    const std::string folder = base.empty() ? "." : base.substr(0, base.size() - 1);
    const long owner = static_cast<long>(job["owner_pid"].i64());
    const long long clock_ns = job["clock_ns"].kind == Json::Num ? job["clock_ns"].i64() : 10;

    // timescale 1ns/1ps: the context counts picoseconds, as cocotb's main does
    auto top = std::make_unique<Vtop>(ctx.get(), "");
    Bench bench(ctx.get(), top.get(), static_cast<uint64_t>(clock_ns) * 500);
    Dram dram(job["dram_file"].str);
    FILE* results = std::fopen(job["results"].str.c_str(), "a");
    if (!results) {
        std::fprintf(stderr, "vta_tb_fast: cannot write %s\n", job["results"].str.c_str());
        return 2;
    }
    bench.start();
    const auto& programs = job["programs"].arr;
    for (size_t i = 0; i < programs.size() && !ctx->gotFinish(); ++i) {
        const Json& p = programs[i];
        if (owner > 0 && !alive(owner)) {
            remove_tree(folder);
            std::_Exit(3);
        }
        const std::string img = read_file(base + "p" + std::to_string(i) + ".img");
        const std::string code = read_file(base + "p" + std::to_string(i) + ".insn");
        const size_t start = static_cast<size_t>(p["image_offset"].i64());
        const size_t n_img = static_cast<size_t>(p["image_bytes"].i64());
        const size_t insn_off = static_cast<size_t>(p["insn_offset"].i64());
        const size_t total = static_cast<size_t>(p["total_bytes"].i64());
        if (total > dram.size() || start + img.size() > total || insn_off + code.size() > total) {
            std::fprintf(stderr, "vta_tb_fast: %s does not fit the DRAM file\n",
                         p["name"].str.c_str());
            return 2;
        }
        uint8_t* mem = dram.data();
        std::memset(mem, 0, total);
        std::memcpy(mem + start, img.data(), img.size());
        std::memcpy(mem + insn_off, code.data(), code.size());

        const double wall0 = seconds(CLOCK_MONOTONIC);
        const double cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        uint64_t waited = 0;
        std::string state = bench.run(p, waited, owner, folder);
        const double wall = seconds(CLOCK_MONOTONIC) - wall0;
        const double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
        if (ctx->gotFinish()) break;  // $finish / $fatal inside the run: no result
        if (state == "done") {
            bench.cycle();  // let the counters settle (cocotb: ClockCycles(2))
            bench.cycle();
        }
        Vtop& d = *top;
        const Output outs[] = {
            {"busy", d.busy_o}, {"done", d.done_o}, {"error", d.error_o},
            {"error_insn", d.error_insn_o}, {"cycles", d.cycles_o},
            {"load_busy", d.load_busy_o}, {"compute_busy", d.compute_busy_o},
            {"store_busy", d.store_busy_o}, {"load_insns", d.load_insns_o},
            {"compute_insns", d.compute_insns_o}, {"store_insns", d.store_insns_o},
            {"acc_writes", d.acc_writes_o}, {"dram_rd_beats", d.dram_rd_beats_o},
            {"dram_wr_beats", d.dram_wr_beats_o}, {"dram_rd_bursts", d.dram_rd_bursts_o},
            {"dram_wr_bursts", d.dram_wr_bursts_o},
            {"dram_max_rd_outstanding", d.dram_max_rd_outstanding_o},
            {"dram_proto_err", d.dram_proto_err_o}, {"dram_resp_err", d.dram_resp_err_o},
            {"dram_open_at_done", d.dram_open_at_done_o},
        };
        if (state == "done" && d.error_o) state = "error";
        // Bytes the core must not have touched: everything outside the image.
        uint64_t stray = 0;
        for (size_t a = 0; a < total; ++a) {
            if (a >= start && a < start + n_img) continue;
            uint8_t want = (a >= insn_off && a < insn_off + code.size())
                               ? static_cast<uint8_t>(code[a - insn_off]) : 0;
            stray += mem[a] != want;
        }
        write_file(base + "p" + std::to_string(i) + ".out", mem + start, n_img);

        std::string line = "{\"name\": " + json_string(p["name"].str) + ", \"state\": " +
                           json_string(state);
        for (const Output& o : outs) line += ", \"" + std::string(o.name) + "\": " +
                                             std::to_string(o.value);
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      ", \"sim_cycles\": %llu, \"wall_s\": %.4f, \"cycles_per_s\": %s, "
                      "\"cpu_s\": %.4f, \"cycles_per_cpu_s\": %s, \"stray_writes\": %llu}\n",
                      static_cast<unsigned long long>(waited), wall,
                      wall > 0 ? std::to_string(std::llround(waited / wall)).c_str() : "null",
                      cpu,
                      cpu > 0 ? std::to_string(std::llround(waited / cpu)).c_str() : "null",
                      static_cast<unsigned long long>(stray));
        line += buf;
        std::fputs(line.c_str(), results);
        std::fflush(results);
        if (state != "done") {
            std::fprintf(stderr, "vta_tb_fast: %s: %s after %llu cycles\n",
                         p["name"].str.c_str(), state.c_str(),
                         static_cast<unsigned long long>(waited));
        }
        std::printf("%s: %s, %llu cycles, %.3f s\n", p["name"].str.c_str(), state.c_str(),
                    static_cast<unsigned long long>(d.cycles_o), wall);
    }
    std::fclose(results);
    top->final();
    return ctx->gotError() ? 1 : 0;
}
