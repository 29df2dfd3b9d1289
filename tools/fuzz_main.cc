// A stand-in for libFuzzer's main outside --config=fuzz: runs every file given
// on the command line (or found in a directory given there) through the
// target's LLVMFuzzerTestOneInput once. The *_corpus_test targets use it to
// replay the checked-in seed corpora in every build (default, asan, ubsan); a
// crash, sanitizer report or FUZZ_CHECK failure fails the test.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "fuzz_main: cannot read %s\n", path.c_str());
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0, errors = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (!entry.is_regular_file()) continue;
        errors += RunFile(entry.path());
        ++inputs;
      }
    } else {
      errors += RunFile(path);
      ++inputs;
    }
  }
  std::printf("fuzz_main: ran %d inputs\n", inputs - errors);
  if (inputs == 0) std::fprintf(stderr, "fuzz_main: no inputs given\n");
  return inputs == 0 || errors > 0 ? 1 : 0;
}
