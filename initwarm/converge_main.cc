// kc-converge: the convergence runner (`initwarm converge`, cli/cmd_converge.cc)
// as a program of its own, linked fully static so that it runs in any model
// image: kc-converge [--max-passes=N] [--view=...] [--record=...] -- <command>
#include <string>
#include <vector>

#include "initwarm/cli/commands.h"

int main(int argc, char** argv) {
  return kc::initwarm::RunConverge(std::vector<std::string>(argv + 1, argv + argc));
}
