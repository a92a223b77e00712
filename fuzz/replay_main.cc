// Replays files (or every file of directories) through
// LLVMFuzzerTestOneInput: a fuzz target's committed corpus as a plain test,
// under any compiler (kc_fuzz in fuzz/kc_fuzz.cmake links it to every
// target). Inputs run in name order; each name is printed before it runs,
// so a crash or trap (a violated property) names its input.
//
// --mutations=N [--seed=S]: then a bounded, deterministic mutation run: N
// inputs made from the corpus by 1-4 random edits each (bit flips, bytes
// set to JSON/YAML/ELF-significant values, deletions, duplications,
// splices of another input, truncations), seeded by S (default 1). Not
// coverage-guided (scripts/fuzz.sh runs libFuzzer for that); it runs under
// gcc in the unit suite, so every test run throws a few thousand hostile
// inputs at every decoder. A mutant that crashes (a signal: a trap, an
// abort from an uncaught exception, a segfault) is written to
// $TMPDIR/<program>.crash-input by the signal handler, to reproduce it
// (`<program> <that file>`).
// Exit 0 when every input ran.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The mutant running now, for the crash handler (async-signal-safe:
// open/write/close only, then the default action again).
const std::string* g_current = nullptr;
std::string g_crash_path;

void OnCrash(int sig) {
  if (g_current != nullptr) {
    const int fd = ::open(g_crash_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, g_current->data(), g_current->size());
      ::close(fd);
      static constexpr char kMsg[] = "fuzz_replay: a mutant crashed; written to the crash input\n";
      (void)!::write(2, kMsg, sizeof(kMsg) - 1);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const std::string& data) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
}

std::string Mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  static constexpr std::string_view kSpecial = "\0\xff\x7f\x80\"{}[]:,\\-.0123456789eE\n \t'#&*!|>";
  auto pick = [&rng](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // a significant byte
        if (!s.empty()) s[pick(s.size())] = kSpecial[pick(kSpecial.size())];
        break;
      case 2: {  // insert a significant byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(pick(s.size() + 1)),
                 kSpecial[pick(kSpecial.size())]);
        break;
      }
      case 3: {  // delete a range
        if (s.empty()) break;
        const size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<size_t>(s.size() - at, 64)));
        break;
      }
      case 4: {  // duplicate a range
        if (s.empty() || s.size() > 65536) break;
        const size_t at = pick(s.size());
        const std::string chunk = s.substr(at, 1 + pick(std::min<size_t>(s.size() - at, 256)));
        s.insert(pick(s.size() + 1), chunk);
        break;
      }
      case 5: {  // splice another input
        const std::string& other = corpus[pick(corpus.size())];
        if (other.empty()) break;
        const size_t from = pick(other.size());
        s = s.substr(0, pick(s.size() + 1)) + other.substr(from);
        break;
      }
      default:  // truncate
        s.resize(pick(s.size() + 1));
        break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  std::uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.starts_with("--mutations=")) {
      mutations = std::strtol(argv[i] + 12, nullptr, 10);
      continue;
    }
    if (a.starts_with("--seed=")) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
      continue;
    }
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no inputs\n");
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> corpus;
  for (const auto& f : files) {
    std::printf("fuzz_replay: %s\n", f.c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    corpus.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Run(corpus.back());
  }
  std::printf("fuzz_replay: %zu inputs ran\n", files.size());
  if (mutations <= 0) return 0;

  const char* tmp = std::getenv("TMPDIR");
  g_crash_path = (std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                  (std::filesystem::path(argv[0]).filename().string() + ".crash-input"))
                     .string();
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnCrash);
  std::printf("fuzz_replay: %ld mutants (seed %llu); a crashing one is written to %s\n", mutations,
              static_cast<unsigned long long>(seed), g_crash_path.c_str());
  std::fflush(stdout);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < mutations; ++i) {
    const std::string m = Mutate(corpus[static_cast<size_t>(rng() % corpus.size())], corpus, rng);
    g_current = &m;
    Run(m);
  }
  g_current = nullptr;
  std::printf("fuzz_replay: %ld mutants ran\n", mutations);
  return 0;
}
