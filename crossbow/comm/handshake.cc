#include "crossbow/comm/handshake.h"

#include <nlohmann/json.hpp>

#include "crossbow/core/enforce.h"

namespace crossbow {

void CheckRanksAgree(ProcessGroup& group, const RankSettings& settings, const std::string& error,
                     std::chrono::milliseconds timeout) {
  const nlohmann::json mine = {{"error", error}, {"settings", settings}};
  const std::vector<std::string> all = group.AllGather(mine.dump(), timeout);
  std::vector<RankSettings> ranks;
  for (size_t r = 0; r < all.size(); ++r) {
    const nlohmann::json j = nlohmann::json::parse(all[r], nullptr, false);
    CROSSBOW_ENFORCE_VALUE(j.is_object() && j.contains("settings"), "rank ", r,
                           " sent an unreadable start-up check: is it the same version?");
    const std::string failed = j.value("error", "");
    CROSSBOW_ENFORCE_VALUE(failed.empty(), "rank ", r, " of ", all.size(),
                           " cannot start: ", failed);
    ranks.push_back(j["settings"].get<RankSettings>());
  }
  const RankSettings& first = ranks[0];
  for (size_t r = 1; r < ranks.size(); ++r) {
    for (size_t i = 0; i < std::max(first.size(), ranks[r].size()); ++i) {
      const bool same = i < first.size() && i < ranks[r].size() && first[i] == ranks[r][i];
      if (same) continue;
      const std::string name = i < first.size() ? first[i].first : ranks[r][i].first;
      const std::string theirs = i < ranks[r].size() ? ranks[r][i].second : "(nothing)";
      const std::string ours = i < first.size() ? first[i].second : "(nothing)";
      CROSSBOW_ENFORCE_VALUE(false, "rank ", r, " differs from rank 0 in ", name, ": ", theirs,
                             ", rank 0 has ", ours, " (every rank must run the same command on ",
                             "the same data)");
    }
  }
}

}  // namespace crossbow
