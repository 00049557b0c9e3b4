#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace crossbow::data {

// The order in which an epoch visits the records 0..records-1: a permutation seeded by
// (seed, epoch) when shuffling, else 0, 1, 2, ... The same on every platform.
// With `block` > 0 the permutation is block-shuffled (as WebDataset's shards and FFCV's
// quasi-random order): the records are cut into contiguous blocks of `block`, the blocks are
// shuffled, and the records of each run of `window` consecutive blocks of that order are
// shuffled together. Every record is still visited once; reads stay within `window` contiguous
// stretches of the DB at a time, so a DB larger than the page cache is read almost sequentially.
std::vector<int64_t> EpochOrder(int64_t records, uint64_t seed, int64_t epoch, bool shuffle,
                                int64_t block = 0, int64_t window = 1);

// Whether `records` records that form `label_runs` runs of one label (in key order) are in no
// label order: on average at most 4 in a row share a label (a shuffled DB of K classes has runs
// of K/(K-1)). False for a DB in label order (`convert --by_folder` without --shuffle), and
// where the runs are unknown (label_runs < 0: metadata from before they were recorded).
bool LabelsInterleaved(int64_t records, int64_t label_runs);
// "labels interleaved", "labels in label order (runs of N records)" or, where the runs are
// unknown, that the metadata does not say: what `crossbow db check` and the read order say.
std::string DescribeLabelOrder(int64_t records, int64_t label_runs);

// The loader's read order, from "random" (uniform), "block", or "auto": block where the DB's
// data file is larger than half the machine's memory (it cannot stay in the page cache) and its
// labels are interleaved: blocks of a DB in label order would fill each batch with the few
// classes of the blocks being read. `note` is a line for the log, empty where nothing needs
// saying; `warn` where the line is a warning. A ValueError naming the choices for another name.
struct ReadOrderChoice {
  bool block = false;
  std::string note;
  bool warn = false;
};
ReadOrderChoice ChooseReadOrder(const std::string& read_order, uint64_t db_bytes,
                                uint64_t ram_bytes, int64_t records, int64_t label_runs);
// Inline, so that the option table (libcrossbow, which does not link the data library) takes
// the names from here.
inline const std::vector<std::string>& ReadOrderNames() {
  static const std::vector<std::string> names = {"auto", "random", "block"};
  return names;
}
// Physical memory of this machine, in bytes.
uint64_t PhysicalMemory();
// Records in a block of about 8 MiB of the DB's data (at least 16).
int64_t BlockRecords(uint64_t db_bytes, int64_t records);

}  // namespace crossbow::data
