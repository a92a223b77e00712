// Replays files (or every file of directories) through
// LLVMFuzzerTestOneInput: a fuzz target's committed corpus as a plain test,
// under any compiler (kc_fuzz in fuzz/kc_fuzz.cmake links it to every
// target). Inputs run in name order; each name is printed before it runs,
// so a crash or trap (a violated property) names its input. Exit 0 when
// every input ran.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
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
  for (const auto& f : files) {
    std::printf("fuzz_replay: %s\n", f.c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("fuzz_replay: %zu inputs ran\n", files.size());
  return 0;
}
