#include "testing/result_printer.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace accel::testing {
namespace {

// Runs `print` with the process's standard output captured, then writes what it printed with GoogleTest's skip tag
// replaced. Where no capture can be made (no temporary file), `print` writes directly.
template <class Print>
void print_with_skip_tag(Print&& print) {
  std::fflush(stdout);
  FILE* capture = std::tmpfile();
  const int saved = capture != nullptr ? ::dup(STDOUT_FILENO) : -1;
  if (saved < 0 || ::dup2(::fileno(capture), STDOUT_FILENO) < 0) {
    if (saved >= 0) ::close(saved);
    if (capture != nullptr) std::fclose(capture);
    print();
    return;
  }
  print();
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(capture);
  char chunk[4096];
  for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, capture)) > 0;) text.append(chunk, got);
  std::fclose(capture);
  constexpr std::string_view kGtestTag = "[  SKIPPED ]", kOurTag = "[   SKIP   ]";
  for (std::size_t at = text.find(kGtestTag); at != std::string::npos; at = text.find(kGtestTag, at)) {
    text.replace(at, kGtestTag.size(), kOurTag);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

class SkipTagPrinter : public ::testing::TestEventListener {
 public:
  explicit SkipTagPrinter(std::unique_ptr<::testing::TestEventListener> printer) : printer_(std::move(printer)) {}

  // -- the events whose printing may carry the skip tag ----------------------------------------------------------
  void OnTestEnd(const ::testing::TestInfo& test) override {
    print_with_skip_tag([&] { printer_->OnTestEnd(test); });
  }
  void OnTestIterationEnd(const ::testing::UnitTest& tests, int iteration) override {
    print_with_skip_tag([&] { printer_->OnTestIterationEnd(tests, iteration); });
  }

  // -- every other event, forwarded as it is ---------------------------------------------------------------------
  void OnTestProgramStart(const ::testing::UnitTest& tests) override { printer_->OnTestProgramStart(tests); }
  void OnTestIterationStart(const ::testing::UnitTest& tests, int iteration) override {
    printer_->OnTestIterationStart(tests, iteration);
  }
  void OnEnvironmentsSetUpStart(const ::testing::UnitTest& tests) override {
    printer_->OnEnvironmentsSetUpStart(tests);
  }
  void OnEnvironmentsSetUpEnd(const ::testing::UnitTest& tests) override { printer_->OnEnvironmentsSetUpEnd(tests); }
  void OnTestSuiteStart(const ::testing::TestSuite& suite) override { printer_->OnTestSuiteStart(suite); }
  void OnTestCaseStart(const ::testing::TestCase& suite) override { printer_->OnTestCaseStart(suite); }
  void OnTestStart(const ::testing::TestInfo& test) override { printer_->OnTestStart(test); }
  void OnTestDisabled(const ::testing::TestInfo& test) override { printer_->OnTestDisabled(test); }
  void OnTestPartResult(const ::testing::TestPartResult& result) override { printer_->OnTestPartResult(result); }
  void OnTestSuiteEnd(const ::testing::TestSuite& suite) override { printer_->OnTestSuiteEnd(suite); }
  void OnTestCaseEnd(const ::testing::TestCase& suite) override { printer_->OnTestCaseEnd(suite); }
  void OnEnvironmentsTearDownStart(const ::testing::UnitTest& tests) override {
    printer_->OnEnvironmentsTearDownStart(tests);
  }
  void OnEnvironmentsTearDownEnd(const ::testing::UnitTest& tests) override {
    printer_->OnEnvironmentsTearDownEnd(tests);
  }
  void OnTestProgramEnd(const ::testing::UnitTest& tests) override { printer_->OnTestProgramEnd(tests); }

 private:
  std::unique_ptr<::testing::TestEventListener> printer_;
};

}  // namespace

std::unique_ptr<::testing::TestEventListener> printer_with_skip_tag(
    std::unique_ptr<::testing::TestEventListener> printer) {
  return std::make_unique<SkipTagPrinter>(std::move(printer));
}

}  // namespace accel::testing
