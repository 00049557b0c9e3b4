#include "crossbow/core/names.h"

#include <algorithm>
#include <cctype>

namespace crossbow {
namespace {

// Optimal string alignment: insertions, deletions, substitutions and swaps of two neighbours
// ("sam" for "sma") cost 1 each; case is ignored.
size_t EditDistance(const std::string& a, const std::string& b) {
  auto same = [](char x, char y) { return std::tolower(x) == std::tolower(y); };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string DidYouMean(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = 1 + name.size() / 2;
  for (const std::string& candidate : known) {
    const size_t d = EditDistance(name, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return text;
}

}  // namespace crossbow
