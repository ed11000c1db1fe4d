// The `simplecpp` command-line tool: dispatches to the run / info / test / ops / export-builtin /
// quantize / convert / generate subcommands and turns every error into a message on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "simplecpp/cli/cli_util.h"
#include "simplecpp/error.h"

int main(int argc, char** argv) {
  using namespace simplecpp::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(UsageText(), stderr);
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "run") return RunCommand(args);
    if (command == "info") return InfoCommand(args);
    if (command == "test") return TestCommand(args);
    if (command == "ops") return OpsCommand(args);
    if (command == "export-builtin") return ExportBuiltinCommand(args);
    if (command == "quantize") return QuantizeCommand(args);
    if (command == "convert") return ConvertCommand(args);
    if (command == "generate") return GenerateCommand(args);
    if (command == "help" || command == "--help" || command == "-h") {
      std::fputs(UsageText(), stdout);
      return 0;
    }
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "simplecpp %s: %s (see 'simplecpp help')\n", command.c_str(), e.what());
    return 2;
  } catch (const simplecpp::Error& e) {
    std::fprintf(stderr, "simplecpp %s: error: %s\n", command.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simplecpp %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
}
