#include "crossbow/core/names.h"

#include <algorithm>
#include <cctype>

namespace crossbow {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
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
