#pragma once

#include <map>
#include <string>
#include <vector>

#include "crossbow/core/tensor.h"

namespace crossbow {

// A named list of plain tensors in one file: magic, count, (name, dtype, shape, bytes)...,
// then a CRC-32 of everything before it. Written atomically: a temporary file beside the
// target is fsynced and renamed over it, so a crash mid-write leaves the old file intact.
void SaveTensors(const std::string& path,
                 const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// Reads every tensor of a file written by SaveTensors. Throws, naming the path, for missing,
// truncated, corrupt or foreign files.
std::map<std::string, Tensor> LoadTensors(const std::string& path);

// The bytes SaveTensors writes, and back (`path` names them in errors): for tensors sent
// between processes.
std::string PackTensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors);
std::map<std::string, Tensor> UnpackTensors(const std::string& bytes, const std::string& path);

// Writes `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the folder).
void WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace crossbow
